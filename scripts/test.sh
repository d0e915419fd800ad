#!/usr/bin/env bash
# Sets up and runs the whole test suite, against SQLite and against PostgreSQL.
source "$(dirname "$0")/lib.sh"
ensure_node
ensure_dependencies
ensure_postgres
# The dashboard's browser tests drive Chromium; the check-command tests run bubblewrap.
ensure_chromium
ensure_bubblewrap
exec npm test --silent -- "$@"
