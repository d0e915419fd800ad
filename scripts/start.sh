#!/usr/bin/env bash
# Sets up and runs docwright on the embedded default (SQLite in ~/.local/share/docwright, or
# DOCWRIGHT_DATA_DIR).
# Extra arguments go to `docwright serve` (e.g. --port 9000).
source "$(dirname "$0")/lib.sh"
ensure_node
ensure_dependencies
node_path_hint
exec node bin/docwright.js serve "$@"
