# shellcheck shell=bash
# scripts/node-deps.sh: the one step bash keeps, because the TypeScript provisioning (ops/) needs
# node_modules: check Node 20.6+ and npm, then `npm install` when node_modules is missing or older
# than package-lock.json. npm install, not npm ci: both install the locked versions, but npm ci
# refuses a lock that lacks other platforms' optional packages, which a registry mirror leaves out.
# --prefer-offline: the lock pins every version, so packages already in npm's cache are taken from
# it without asking the registry again (a clean clone's install: 27 s of CPU instead of 46 s here).
vh_node_deps() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo 'error: node and npm are needed (Node.js 20.6+: https://nodejs.org or apt-get install nodejs npm)' >&2
    return 1
  fi
  node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=6)?0:1)' || { echo "error: Node.js $(node -v) is too old: this project needs 20.6+" >&2; return 1; }
  local mark=node_modules/.package-lock.json
  [ ! -f "$mark" ] || [ package-lock.json -nt "$mark" ] || return 0
  echo '==> installing node dependencies with npm install...' >&2
  npm install --no-audit --no-fund --prefer-offline >&2 || { echo 'error: npm install failed' >&2; return 1; }
  touch "$mark" # npm leaves it untouched when nothing changed
}
