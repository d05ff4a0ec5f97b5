# shellcheck shell=bash disable=SC2016,SC2034
# scripts/lib.sh: shared provisioning helpers for scripts/start and scripts/test.
#
# Source it (it's safe with `set -euo pipefail`) and call `vh_init` first:
#   . scripts/lib.sh; vh_init
#
# Every vh_* function is idempotent and cached. Pinned tools get built once
# into $VH_TOOLS_DIR/bin, with a version marker in $VH_TOOLS_DIR/versions/<tool>,
# so changing the pinned version below triggers a rebuild.
#
# Environment read (all optional):
#   VH_TOOLS_DIR        tool cache (default: $HOME/.cache/vidhost/tools)
#   VH_DATA_DIR         runtime state: pg cluster, temporal sqlite, logs, secrets (default: ./data,
#                       relative to the repo root)
#   TEMPORAL_CLI_PATH   use this temporal binary as is
#   VERSITYGW_PATH      use this versitygw binary as is
#   CHROMIUM_PATH       use this chromium/chrome binary as is
#   DATABASE_URL        use this database as is (no local postgres provisioning)
#   VH_PG_PORT          port of the cluster we create ourselves (default 54329)
#   VH_KEEP_PG=1        don't stop a postgres cluster that we started when the script exits
#   TEMPORAL_ADDRESS    (start) use this Temporal server; no dev server is started
#   TEMPORAL_PORT / TEMPORAL_UI_PORT   (start) dev-server ports (default 7233 / 8233)

# Pinned versions. Changing one causes a rebuild on the next run.
: "${VH_TEMPORAL_CLI_VERSION:=v1.5.1}"
: "${VH_VERSITYGW_VERSION:=v1.7.0}"
VH_TEMPORAL_CLI_MODULE=github.com/temporalio/cli
VH_TEMPORAL_CLI_PKG=github.com/temporalio/cli/cmd/temporal
VH_VERSITYGW_MODULE=github.com/versity/versitygw
VH_VERSITYGW_PKG=github.com/versity/versitygw/cmd/versitygw

VH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# ---------------------------------------------------------------------------
# logging / small helpers
# ---------------------------------------------------------------------------

vh_log() { printf '==> %s\n' "$*" >&2; }
vh_warn() { printf 'warning: %s\n' "$*" >&2; }
vh_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

vh_now() { date +%s; }

# Is root?
_vh_is_root() { [ "$(id -u)" = 0 ]; }

# _vh_port_open HOST PORT: true when something accepts TCP connections there.
_vh_port_open() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$1" "$2" >/dev/null 2>&1
}

# _vh_tail FILE: show the end of a log file on stderr (used on failures).
_vh_tail() {
  [ -f "$1" ] || return 0
  printf -- '---- last lines of %s ----\n' "$1" >&2
  tail -n "${2:-40}" "$1" >&2 || true
  printf -- '----\n' >&2
}

vh_init() {
  if [ -z "${HOME:-}" ]; then
    HOME="$(getent passwd "$(id -u)" | cut -d: -f6)"
    export HOME
  fi
  VH_TOOLS_DIR="${VH_TOOLS_DIR:-$HOME/.cache/vidhost/tools}"
  VH_DATA_DIR="${VH_DATA_DIR:-./data}"
  case "$VH_DATA_DIR" in /*) ;; *) VH_DATA_DIR="$VH_ROOT/${VH_DATA_DIR#./}" ;; esac
  mkdir -p "$VH_TOOLS_DIR/bin" "$VH_TOOLS_DIR/versions" "$VH_TOOLS_DIR/logs" "$VH_DATA_DIR/logs"
  VH_DATA_DIR="$(cd "$VH_DATA_DIR" && pwd)"
  export VH_ROOT VH_TOOLS_DIR VH_DATA_DIR
  VH_PG_STARTED=""
  VH_TEMPORAL_DEV_PID=""
}

# vh_tsx ARGS...: run a TypeScript entry point (same as `npx tsx`, minus the npm wrapper).
vh_tsx() {
  if [ -x "$VH_ROOT/node_modules/.bin/tsx" ]; then
    "$VH_ROOT/node_modules/.bin/tsx" "$@"
  else
    npx --no-install tsx "$@"
  fi
}

# ---------------------------------------------------------------------------
# node dependencies
# ---------------------------------------------------------------------------

vh_node_deps() {
  command -v node >/dev/null 2>&1 || vh_die "node not found: install Node.js 20+ (https://nodejs.org or apt-get install nodejs)"
  command -v npm >/dev/null 2>&1 || vh_die "npm not found: install npm (it ships with Node.js; Debian: apt-get install npm)"
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 20 ] || vh_die "Node.js $(node -v) is too old: this project needs Node.js 20+"

  local nm="$VH_ROOT/node_modules"
  local need=""
  if [ ! -d "$nm" ] || [ ! -f "$nm/.package-lock.json" ]; then
    need="node_modules missing"
  elif [ -f "$VH_ROOT/package-lock.json" ] && [ "$VH_ROOT/package-lock.json" -nt "$nm/.package-lock.json" ]; then
    need="package-lock.json changed"
  fi
  [ -n "$need" ] || return 0

  # npm install, not npm ci: both install the locked versions, but npm ci refuses a lock that lacks
  # other platforms' optional packages (@swc/core-darwin-*), which a registry mirror without them
  # leaves out of the lock.
  vh_log "installing node dependencies with npm install ($need)..."
  (cd "$VH_ROOT" && npm install --no-audit --no-fund) || vh_die "npm install failed"
  # npm leaves the lock untouched when nothing changed; mark node_modules as current either way.
  touch "$nm/.package-lock.json"
}

# ---------------------------------------------------------------------------
# Go-built tools (temporal CLI, versitygw)
# ---------------------------------------------------------------------------

# _vh_find_go: print the path of a usable go binary.
_vh_find_go() {
  if command -v go >/dev/null 2>&1; then
    command -v go
  elif [ -x /usr/local/go/bin/go ]; then
    echo /usr/local/go/bin/go
  elif [ -x "$HOME/go/bin/go" ]; then
    echo "$HOME/go/bin/go"
  else
    return 1
  fi
}

# _vh_bin_module_version BIN MODULE: print MODULE's version embedded in a Go binary.
_vh_bin_module_version() {
  local go
  go="$(_vh_find_go)" || return 1
  "$go" version -m "$1" 2>/dev/null | awk -v m="$2" '$1 == "mod" && $2 == m { print $3; found = 1 } END { exit !found }'
}

# _vh_bin_is_version BIN MODULE VERSION: best-effort check of a binary's version.
_vh_bin_is_version() {
  local bin="$1" module="$2" want="$3" got
  if got="$(_vh_bin_module_version "$bin" "$module")"; then
    [ "$got" = "$want" ]
    return
  fi
  # No go toolchain (or a stripped binary): fall back to --version output.
  "$bin" --version 2>/dev/null | grep -qF "${want#v}"
}

# _vh_tool_cached NAME MODULE VERSION: true when $VH_TOOLS_DIR/bin/NAME is the pinned version.
_vh_tool_cached() {
  local name="$1" module="$2" want="$3"
  local bin="$VH_TOOLS_DIR/bin/$name" marker="$VH_TOOLS_DIR/versions/$name"
  [ -x "$bin" ] || return 1
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
    return 0
  fi
  # Binary without (matching) marker, e.g. copied in by hand: accept it if it embeds the pinned version.
  if [ "$(_vh_bin_module_version "$bin" "$module" 2>/dev/null || true)" = "$want" ]; then
    echo "$want" >"$marker"
    return 0
  fi
  return 1
}

# _vh_go_build NAME PKG MODULE VERSION VARNAME: go install PKG@VERSION into $VH_TOOLS_DIR/bin.
_vh_go_build() {
  local name="$1" pkg="$2" module="$3" version="$4"
  local title
  case "$name" in
    temporal) title="Temporal CLI" ;;
    *) title="$name" ;;
  esac
  local go
  go="$(_vh_find_go)" || vh_die "$title $version is needed but the Go toolchain was not found.
  Install Go 1.24 or newer (https://go.dev/dl/, unpacked to /usr/local/go; or apt-get install golang-go if your distro's is new enough),
  or install a prebuilt $name and put it on PATH (or point ${5:-the matching *_PATH variable} at it)."

  local lock="$VH_TOOLS_DIR/.$name.lock"
  local log="$VH_TOOLS_DIR/logs/$name.log"
  # Serialize concurrent builds (scripts/start and scripts/test at the same time).
  exec {_vh_lock_fd}>"$lock"
  if ! flock -n "$_vh_lock_fd"; then
    vh_log "waiting for another build of $name to finish..."
    flock "$_vh_lock_fd"
  fi
  if _vh_tool_cached "$name" "$module" "$version"; then
    exec {_vh_lock_fd}>&-
    return 0
  fi

  vh_log "building $title $version (first run only, a few minutes; $("$go" env GOVERSION), log: $log)..."
  local tmp start rc=0
  tmp="$(mktemp -d "$VH_TOOLS_DIR/.build-$name.XXXXXX")"
  start="$(vh_now)"
  GOBIN="$tmp" GOFLAGS=-buildvcs=false "$go" install "$pkg@$version" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -x "$tmp/$name" ]; then
    rm -rf "$tmp"
    exec {_vh_lock_fd}>&-
    _vh_tail "$log"
    vh_die "building $title $version failed (exit $rc); full log: $log"
  fi
  mv -f "$tmp/$name" "$VH_TOOLS_DIR/bin/$name"
  rm -rf "$tmp"
  echo "$version" >"$VH_TOOLS_DIR/versions/$name"
  exec {_vh_lock_fd}>&-
  vh_log "built $title $version in $(($(vh_now) - start))s -> $VH_TOOLS_DIR/bin/$name"
}

# _vh_go_tool VARNAME NAME PKG MODULE VERSION: resolve a pinned Go tool; export VARNAME=<path>.
_vh_go_tool() {
  local var="$1" name="$2" pkg="$3" module="$4" version="$5"
  local preset="${!var:-}"
  if [ -n "$preset" ]; then
    [ -x "$preset" ] || vh_die "$var=$preset is not an executable file"
    export "$var=$preset"
    return 0
  fi
  local bin="$VH_TOOLS_DIR/bin/$name"
  if _vh_tool_cached "$name" "$module" "$version"; then
    export "$var=$bin"
    return 0
  fi
  local onpath=""
  onpath="$(command -v "$name" 2>/dev/null || true)"
  if [ -n "$onpath" ] && _vh_bin_is_version "$onpath" "$module" "$version"; then
    export "$var=$onpath"
    return 0
  fi
  if [ -n "$onpath" ] && ! _vh_find_go >/dev/null; then
    vh_warn "$name on PATH ($onpath) is not the pinned $version and Go isn't available to build it; using it anyway"
    export "$var=$onpath"
    return 0
  fi
  _vh_go_build "$name" "$pkg" "$module" "$version" "$var"
  export "$var=$bin"
}

vh_temporal() {
  _vh_go_tool TEMPORAL_CLI_PATH temporal "$VH_TEMPORAL_CLI_PKG" "$VH_TEMPORAL_CLI_MODULE" "$VH_TEMPORAL_CLI_VERSION"
}

vh_versitygw() {
  _vh_go_tool VERSITYGW_PATH versitygw "$VH_VERSITYGW_PKG" "$VH_VERSITYGW_MODULE" "$VH_VERSITYGW_VERSION"
}

# ---------------------------------------------------------------------------
# apt-installed tools (ffmpeg, chromium)
# ---------------------------------------------------------------------------

# _vh_apt_install PKG...: apt-get install as root; returns 1 when that's not possible.
_vh_apt_install() {
  _vh_is_root || return 1
  command -v apt-get >/dev/null 2>&1 || return 1
  local log="$VH_DATA_DIR/logs/apt.log"
  local apt=(apt-get -o DPkg::Lock::Timeout=300 -y --no-install-recommends)
  vh_log "installing $* with apt-get (first run only; log: $log)..."
  export DEBIAN_FRONTEND=noninteractive
  if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
    apt-get -o DPkg::Lock::Timeout=300 update >>"$log" 2>&1 || { _vh_tail "$log"; vh_die "apt-get update failed"; }
  fi
  if ! "${apt[@]}" install "$@" >>"$log" 2>&1; then
    # Stale package lists are the usual cause: refresh and retry once.
    apt-get -o DPkg::Lock::Timeout=300 update >>"$log" 2>&1 || { _vh_tail "$log"; vh_die "apt-get update failed"; }
    "${apt[@]}" install "$@" >>"$log" 2>&1 || { _vh_tail "$log"; vh_die "apt-get install $* failed"; }
  fi
}

_vh_ffmpeg_ok() {
  command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 || return 1
  local enc
  enc="$(ffmpeg -hide_banner -encoders 2>/dev/null)" || return 1
  grep -Eq '^ *V[^ ]* +libx264 ' <<<"$enc" && grep -Eq '^ *A[^ ]* +aac ' <<<"$enc"
}

vh_ffmpeg() {
  _vh_ffmpeg_ok && return 0
  if command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1; then
    vh_warn "ffmpeg at $(command -v ffmpeg) lacks the libx264 or aac encoder"
  fi
  _vh_apt_install ffmpeg || vh_die "ffmpeg + ffprobe with libx264 and aac are required.
  Debian/Ubuntu: sudo apt-get install ffmpeg   (macOS: brew install ffmpeg)"
  _vh_ffmpeg_ok || vh_die "ffmpeg was installed but still lacks libx264/aac (check: ffmpeg -encoders)"
}

# vh_bwrap: bubblewrap sandboxes every ffmpeg/ffprobe run on uploads (docs/security.md). Without it
# (not root, no apt) the worker runs ffmpeg unsandboxed and says so at boot (MEDIA_SANDBOX=auto).
vh_bwrap() {
  command -v bwrap >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1 && return 0
  _vh_apt_install bubblewrap util-linux ||
    vh_warn "bubblewrap not found and can't be installed here (needs root + apt-get: apt-get install bubblewrap);
  ffmpeg will run without the sandbox (MEDIA_SANDBOX=none)"
}

vh_chromium() {
  local c=""
  if [ -n "${CHROMIUM_PATH:-}" ]; then
    [ -x "$CHROMIUM_PATH" ] || vh_die "CHROMIUM_PATH=$CHROMIUM_PATH is not executable"
    return 0
  fi
  for c in /usr/bin/chromium chromium chromium-browser google-chrome-stable google-chrome; do
    c="$(command -v "$c" 2>/dev/null || true)"
    if [ -n "$c" ]; then
      export CHROMIUM_PATH="$c"
      return 0
    fi
  done
  if _vh_apt_install chromium fonts-liberation && [ -x /usr/bin/chromium ]; then
    export CHROMIUM_PATH=/usr/bin/chromium
    return 0
  fi
  vh_warn "chromium not found and can't be installed here (needs root + apt-get: apt-get install chromium);
  browser tests will fail. Install chromium or set CHROMIUM_PATH."
}

# vh_compose_validator: Debian's docker-compose validates docker-compose.yml without an engine
# (the compose test uses it). Warns when it can't be had; that test then fails and says why.
vh_compose_validator() {
  command -v docker-compose >/dev/null 2>&1 && return 0
  _vh_apt_install docker-compose && return 0
  vh_warn "docker-compose not found and can't be installed here (apt-get install docker-compose);
  the docker-compose.yml validation test will fail."
}

# ---------------------------------------------------------------------------
# PostgreSQL
# ---------------------------------------------------------------------------

# _vh_pg_ready HOST PORT
_vh_pg_ready() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -h "$1" -p "$2" -t 3
  else
    _vh_port_open "$1" "$2"
  fi
}

# _vh_pg_ensure_db HOST PORT DB: create DB (as user postgres, no password) when missing.
_vh_pg_ensure_db() {
  local host="$1" port="$2" db="$3"
  if command -v psql >/dev/null 2>&1; then
    local psql=(psql -X -q -A -t -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U postgres -d postgres)
    local exists
    exists="$(PGCONNECT_TIMEOUT=5 "${psql[@]}" -c "select 1 from pg_database where datname = '$db'" </dev/null)" || return 1
    [ "$exists" = 1 ] && return 0
    vh_log "creating database $db on $host:$port"
    # A concurrent run may win the race; re-check before failing.
    PGCONNECT_TIMEOUT=5 "${psql[@]}" -c "create database \"$db\"" </dev/null >/dev/null 2>&1 ||
      [ "$(PGCONNECT_TIMEOUT=5 "${psql[@]}" -c "select 1 from pg_database where datname = '$db'" </dev/null)" = 1 ]
  else
    # No psql client: use the project's pg driver.
    (cd "$VH_ROOT" && VH_H="$host" VH_P="$port" VH_DB="$db" node -e '
      const { Client } = require("pg");
      (async () => {
        const c = new Client({ host: process.env.VH_H, port: +process.env.VH_P, user: "postgres", database: "postgres", connectionTimeoutMillis: 5000 });
        await c.connect();
        const db = process.env.VH_DB;
        const r = await c.query("select 1 from pg_database where datname = $1", [db]);
        if (r.rowCount === 0) {
          console.error("==> creating database " + db);
          try { await c.query("create database \"" + db.replace(/"/g, "\"\"") + "\""); } catch (e) { if (e.code !== "42P04") throw e; }
        }
        await c.end();
      })().catch((e) => { console.error(e.message); process.exit(1); });
    ')
  fi
}

# _vh_pg_bin NAME: locate a postgres server binary (initdb, pg_ctl).
_vh_pg_bin() {
  local p
  if p="$(command -v "$1" 2>/dev/null)"; then
    echo "$p"
    return 0
  fi
  for p in /usr/local/bin /usr/local/pgsql/bin /opt/homebrew/bin; do
    [ -x "$p/$1" ] && { echo "$p/$1"; return 0; }
  done
  # Debian/Ubuntu keep server binaries off PATH: take the highest installed major version.
  p="$( (ls -d /usr/lib/postgresql/*/bin/"$1" 2>/dev/null || true) | sort -V | tail -n 1)"
  [ -n "$p" ] || return 1
  echo "$p"
}

# Run a command as the unprivileged cluster owner when we're root (initdb/postgres refuse root).
_vh_as_pg_user() {
  if [ -z "${VH_PG_OS_USER:-}" ]; then
    "$@"
  elif command -v runuser >/dev/null 2>&1; then
    runuser -u "$VH_PG_OS_USER" -- "$@"
  else
    su -s /bin/bash "$VH_PG_OS_USER" -c "$(printf '%q ' "$@")"
  fi
}

_vh_pg_pick_os_user() {
  VH_PG_OS_USER=""
  _vh_is_root || return 0
  if id -u postgres >/dev/null 2>&1; then
    VH_PG_OS_USER=postgres
  else
    if ! id -u vidhost-pg >/dev/null 2>&1; then
      vh_log "creating system user vidhost-pg to own the local PostgreSQL cluster"
      useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vidhost-pg ||
        vh_die "could not create a system user for PostgreSQL (initdb refuses to run as root); set DATABASE_URL instead"
    fi
    VH_PG_OS_USER=vidhost-pg
  fi
}

# _vh_pg_local_cluster DB: create/start a private cluster under $VH_DATA_DIR/pg.
_vh_pg_local_cluster() {
  local db="$1" port="${VH_PG_PORT:-54329}"
  local initdb pg_ctl
  initdb="$(_vh_pg_bin initdb || true)"
  pg_ctl="$(_vh_pg_bin pg_ctl || true)"
  if [ -z "$initdb" ] || [ -z "$pg_ctl" ]; then
    vh_die "no PostgreSQL server found: nothing answers on 127.0.0.1:5432 and initdb/pg_ctl aren't installed.
  Debian/Ubuntu: sudo apt-get install postgresql   (macOS: brew install postgresql@16)
  or point DATABASE_URL at an existing server (postgres://user:pass@host:5432/db)."
  fi

  _vh_pg_pick_os_user
  local base="$VH_DATA_DIR/pg"
  mkdir -p "$base"
  if [ -n "$VH_PG_OS_USER" ]; then
    chown "$VH_PG_OS_USER" "$base"
    if ! _vh_as_pg_user test -w "$base" 2>/dev/null; then
      # e.g. repo under /root (mode 700): the postgres user can't reach it.
      base="/var/tmp/vidhost-pg-$(printf '%s' "$VH_DATA_DIR" | cksum | cut -d' ' -f1)"
      vh_log "user $VH_PG_OS_USER can't access $VH_DATA_DIR; keeping the cluster in $base instead"
      mkdir -p "$base"
      chown "$VH_PG_OS_USER" "$base"
      chmod 700 "$base"
    fi
  fi
  VH_PG_BASE="$base"
  VH_PG_CTL="$pg_ctl"
  local pgdata="$base/data" sock="$base/run" log="$base/postgres.log"

  if ! _vh_pg_ready 127.0.0.1 "$port"; then
    if _vh_port_open 127.0.0.1 "$port"; then
      vh_die "port $port is in use by something that isn't an accepting PostgreSQL; set VH_PG_PORT or DATABASE_URL"
    fi
    if [ ! -s "$pgdata/PG_VERSION" ]; then
      vh_log "initializing a PostgreSQL cluster in $pgdata ($("$initdb" --version))"
      _vh_as_pg_user mkdir -p "$pgdata" "$sock"
      (cd "$base" && _vh_as_pg_user "$initdb" -D "$pgdata" -U postgres --auth=trust -E UTF8 --no-locale >"$VH_DATA_DIR/logs/initdb.log" 2>&1) ||
        { _vh_tail "$VH_DATA_DIR/logs/initdb.log"; vh_die "initdb failed"; }
    fi
    _vh_as_pg_user mkdir -p "$sock"
    # Unix socket paths are limited to ~107 bytes; we only use TCP, so drop the socket if too long.
    local sockopt="-k '$sock'"
    [ $((${#sock} + 16)) -le 100 ] || sockopt="-k ''"
    vh_log "starting PostgreSQL on 127.0.0.1:$port (log: $log)"
    (cd "$base" && _vh_as_pg_user "$pg_ctl" -D "$pgdata" -l "$log" -w -t 60 \
      -o "-p $port $sockopt -c listen_addresses=127.0.0.1" start >/dev/null) ||
      { _vh_tail "$log"; vh_die "pg_ctl start failed"; }
    VH_PG_STARTED=1
  else
    vh_log "reusing PostgreSQL already running on 127.0.0.1:$port"
  fi
  _vh_pg_ensure_db 127.0.0.1 "$port" "$db" || vh_die "could not create database $db on 127.0.0.1:$port"
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/$db"
}

# vh_postgres DB: export DATABASE_URL (existing value, the server on :5432, or our own cluster).
vh_postgres() {
  local db="${1:-vidhost}"
  if [ -n "${DATABASE_URL:-}" ]; then
    vh_log "using DATABASE_URL from the environment"
    export DATABASE_URL
    return 0
  fi
  if _vh_pg_ready 127.0.0.1 5432; then
    _vh_pg_ensure_db 127.0.0.1 5432 "$db" ||
      vh_die "PostgreSQL on 127.0.0.1:5432 doesn't accept user postgres without a password.
  Set DATABASE_URL=postgres://user:password@127.0.0.1:5432/$db (the database must exist)."
    export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db"
    vh_log "using PostgreSQL on 127.0.0.1:5432 (database $db)"
    return 0
  fi
  _vh_pg_local_cluster "$db"
}

# vh_stop_postgres: stop the cluster if (and only if) this script started it.
vh_stop_postgres() {
  [ -n "${VH_PG_STARTED:-}" ] || return 0
  VH_PG_STARTED=""
  if [ -n "${VH_KEEP_PG:-}" ]; then
    vh_log "leaving PostgreSQL running (VH_KEEP_PG set); stop: $VH_PG_CTL -D $VH_PG_BASE/data stop"
    return 0
  fi
  vh_log "stopping PostgreSQL"
  (cd "$VH_PG_BASE" && _vh_as_pg_user "$VH_PG_CTL" -D "$VH_PG_BASE/data" -m fast -w -t 30 stop >/dev/null 2>&1) ||
    vh_warn "pg_ctl stop failed (data dir $VH_PG_BASE/data)"
}

# ---------------------------------------------------------------------------
# process helpers
# ---------------------------------------------------------------------------

# vh_spawn CMD...: start CMD in the background in its own session / process group (so a
# terminal Ctrl-C reaches only this script, which then stops the whole tree). Sets VH_SPAWNED_PID.
vh_spawn() {
  setsid "$@" </dev/null &
  VH_SPAWNED_PID=$!
}

# vh_alive PID: true while PID runs (a zombie counts as dead).
vh_alive() {
  local st=""
  if [ -r "/proc/$1/stat" ]; then
    st="$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null || true)"
  elif command -v ps >/dev/null 2>&1; then
    st="$(ps -o stat= -p "$1" 2>/dev/null || true)"
  else
    kill -0 "$1" 2>/dev/null && st=R
  fi
  [ -n "$st" ] && [ "${st:0:1}" != Z ]
}

# vh_stop_child PID NAME [TIMEOUT]: SIGTERM the process, wait up to TIMEOUT seconds, then
# SIGKILL its process group; finally SIGTERM leftovers in its group (e.g. ffmpeg children).
vh_stop_child() {
  local pid="$1" name="$2" timeout="${3:-20}"
  [ -n "$pid" ] || return 0
  if vh_alive "$pid"; then
    vh_log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    local i=0
    while vh_alive "$pid"; do
      if [ "$i" -ge $((timeout * 5)) ]; then
        vh_warn "$name did not stop within ${timeout}s, killing it"
        kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        break
      fi
      sleep 0.2
      i=$((i + 1))
    done
  fi
  wait "$pid" 2>/dev/null || true
  kill -TERM -- "-$pid" 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# Temporal dev server (scripts/start)
# ---------------------------------------------------------------------------

VH_SEARCH_ATTRIBUTES=(VideoId WorkspaceId VideoStatus)

# Register our search attributes on a server we didn't start (best effort; they may exist already).
_vh_temporal_register_search_attributes() {
  local addr="$1" sa existing
  existing="$("$TEMPORAL_CLI_PATH" operator search-attribute list --address "$addr" --command-timeout 10s 2>/dev/null || true)"
  for sa in "${VH_SEARCH_ATTRIBUTES[@]}"; do
    grep -qw "$sa" <<<"$existing" && continue
    "$TEMPORAL_CLI_PATH" operator search-attribute create --address "$addr" --name "$sa" --type Keyword \
      --command-timeout 10s >/dev/null 2>&1 ||
      vh_warn "could not register search attribute $sa on $addr"
  done
}

_vh_temporal_healthy() {
  "$TEMPORAL_CLI_PATH" operator cluster health --address "$1" --command-timeout 3s >/dev/null 2>&1
}

# vh_temporal_dev_server: start `temporal server start-dev` unless a server is already there.
# Exports TEMPORAL_ADDRESS; sets VH_TEMPORAL_DEV_PID (empty when reusing) and VH_TEMPORAL_UI_URL.
vh_temporal_dev_server() {
  local port="${TEMPORAL_PORT:-7233}" ui_port="${TEMPORAL_UI_PORT:-8233}"
  VH_TEMPORAL_DEV_PID=""
  if [ -n "${TEMPORAL_ADDRESS:-}" ]; then
    _vh_temporal_healthy "$TEMPORAL_ADDRESS" ||
      vh_die "TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS doesn't answer a Temporal health check; start that server, or unset TEMPORAL_ADDRESS to get a local dev server"
    vh_log "using Temporal at TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS (no dev server started)"
    _vh_temporal_register_search_attributes "$TEMPORAL_ADDRESS"
    VH_TEMPORAL_UI_URL="${VH_TEMPORAL_UI_URL:-}"
    export TEMPORAL_ADDRESS
    return 0
  fi
  local addr="127.0.0.1:$port"
  export TEMPORAL_ADDRESS="$addr"
  VH_TEMPORAL_UI_URL="http://localhost:$ui_port"
  if _vh_port_open 127.0.0.1 "$port"; then
    vh_log "reusing the Temporal server already listening on $addr"
    _vh_temporal_healthy "$addr" || vh_warn "something listens on $addr but doesn't answer a Temporal health check"
    _vh_temporal_register_search_attributes "$addr"
    return 0
  fi
  if _vh_port_open 127.0.0.1 "$ui_port"; then
    vh_die "port $ui_port (Temporal UI) is in use; set TEMPORAL_UI_PORT to a free port"
  fi

  local log="$VH_DATA_DIR/logs/temporal.log"
  local args=(server start-dev
    --db-filename "$VH_DATA_DIR/temporal.sqlite"
    --ip 127.0.0.1 --port "$port" --ui-port "$ui_port"
    --log-level warn)
  local sa
  for sa in "${VH_SEARCH_ATTRIBUTES[@]}"; do args+=(--search-attribute "$sa=Keyword"); done

  vh_log "starting Temporal dev server on $addr (log: $log)"
  setsid "$TEMPORAL_CLI_PATH" "${args[@]}" </dev/null >>"$log" 2>&1 &
  VH_TEMPORAL_DEV_PID=$!

  local deadline=$(($(vh_now) + 60))
  until _vh_temporal_healthy "$addr"; do
    if ! kill -0 "$VH_TEMPORAL_DEV_PID" 2>/dev/null; then
      wait "$VH_TEMPORAL_DEV_PID" 2>/dev/null || true
      VH_TEMPORAL_DEV_PID=""
      _vh_tail "$log"
      vh_die "the Temporal dev server exited during startup"
    fi
    if [ "$(vh_now)" -ge "$deadline" ]; then
      _vh_tail "$log"
      vh_die "the Temporal dev server didn't become healthy within 60s"
    fi
    sleep 0.5
  done
  vh_log "Temporal dev server ready on $addr (UI: $VH_TEMPORAL_UI_URL)"
}

# ---------------------------------------------------------------------------
# secrets (scripts/start)
# ---------------------------------------------------------------------------

_vh_rand_hex() {
  openssl rand -hex "$1" 2>/dev/null || node -e "process.stdout.write(require('crypto').randomBytes($1).toString('hex'))"
}
_vh_rand_b64url() {
  local v
  if v="$(openssl rand -base64 "$1" 2>/dev/null)"; then
    printf '%s' "$v" | tr '+/' '-_' | tr -d '=\n'
  else
    node -e "process.stdout.write(require('crypto').randomBytes($1).toString('base64url'))"
  fi
}

# vh_secrets: create $VH_DATA_DIR/secrets.env on first run (adding keys missing from an older
# file), then export its values; variables already set in the environment win.
vh_secrets() {
  local f="$VH_DATA_DIR/secrets.env"
  if [ ! -f "$f" ]; then
    (umask 077 && printf '# Generated by scripts/start. Local development secrets; delete this file to rotate.\n' >"$f")
  fi
  if ! grep -q '^UPLOAD_SIGNING_SECRET=' "$f"; then
    printf 'UPLOAD_SIGNING_SECRET=%s\n' "$(_vh_rand_hex 32)" >>"$f"
  fi
  if ! grep -q '^PLAYBACK_SIGNING_KEYS=' "$f"; then
    printf 'PLAYBACK_SIGNING_KEYS=k1:%s\n' "$(_vh_rand_b64url 32)" >>"$f"
  fi
  # The master key wrapping encrypted videos' AES-128 keys (docs/protection.md); 32 bytes.
  if ! grep -q '^PLAYBACK_KEY_MASTERS=' "$f"; then
    printf 'PLAYBACK_KEY_MASTERS=m1:%s\n' "$(_vh_rand_b64url 32)" >>"$f"
  fi
  chmod 600 "$f" 2>/dev/null || true
  local line key
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in '' | '#'*) continue ;; esac
    key="${line%%=*}"
    [[ "$key" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
    if [ -z "${!key:-}" ]; then
      export "$key=${line#*=}"
    fi
  done <"$f"
}
