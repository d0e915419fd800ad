#!/usr/bin/env bash
# Sets up and runs the whole test suite, against SQLite and against PostgreSQL.
source "$(dirname "$0")/lib.sh"
ensure_node
ensure_dependencies
ensure_postgres
exec npm test --silent -- "$@"
