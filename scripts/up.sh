#!/usr/bin/env bash
# Installs and starts the whole vouch stack on this machine, against the local
# Redis and Postgres: preflight, npm ci, build, migrations, every service in the
# background, readiness. Logs and pids go to .run/; `npm run down` stops it.
set -euo pipefail
cd "$(dirname "$0")/.."

# The local stack's addresses: LOCAL_STACK in shared/platform/src/local-stack.ts,
# which `npm run keys` and `npm run migrate` fall back to (a test keeps them equal).
user_database_url="${DATABASE_URL:-}"
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export BULLMQ_PREFIX="${BULLMQ_PREFIX:-vouch}"
export LOG_LEVEL="${LOG_LEVEL:-info}"
export PORT="${PORT:-8080}"
RUN=.run
mkdir -p "$RUN/logs"

say() { printf 'vouch: %s\n' "$*"; }
missing=()

# --- preflight: name whatever is missing and how to get it ---------------------
# The machine's Node only runs npm: the project runs on the Node 24 LTS that `npm ci` installs from the npm
# registry (the devDependency "node"), whatever the machine has.
if ! command -v node >/dev/null; then
  missing+=("Node.js 20.9 or newer, to run npm: https://nodejs.org or 'apt-get install nodejs npm'")
elif ! node -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>20||(a===20&&b>=9)?0:1)'; then
  missing+=("Node.js 20.9 or newer, to run npm (found $(node --version)): https://nodejs.org")
fi
command -v npm >/dev/null || missing+=("npm (comes with Node.js)")
command -v curl >/dev/null || missing+=("curl, to check the services are ready: 'apt-get install curl'")

redis_host=$(node -e 'const u=new URL(process.env.REDIS_URL);console.log(u.hostname+" "+(u.port||6379))' 2>/dev/null || echo "127.0.0.1 6379")
redis_up() { (exec 3<>"/dev/tcp/${redis_host% *}/${redis_host#* }") 2>/dev/null; }
if ! redis_up; then
  if command -v redis-server >/dev/null && [[ "$REDIS_URL" == redis://127.0.0.1* || "$REDIS_URL" == redis://localhost* ]]; then
    say "starting the local Redis (noeviction, as BullMQ needs)"
    mkdir -p "$RUN/redis"
    redis-server --daemonize yes --bind 127.0.0.1 --port "${redis_host#* }" --maxmemory-policy noeviction \
      --appendonly yes --dir "$PWD/$RUN/redis" --logfile "$PWD/$RUN/logs/redis.log"
    sleep 1
  fi
  redis_up || missing+=("Redis 7 at $REDIS_URL: 'apt-get install redis-server', or 'docker compose up -d redis', or set REDIS_URL")
fi

pg_ok() { command -v pg_isready >/dev/null && pg_isready -d "$DATABASE_URL" -q; }
if ! pg_ok; then
  if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
    say "starting the local Postgres"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start 2>/dev/null || true
    sleep 2
  fi
  if ! command -v pg_isready >/dev/null; then
    missing+=("the Postgres client tools (pg_isready): 'apt-get install postgresql-client'")
  fi
  pg_ok || missing+=("Postgres 15+ at $DATABASE_URL: 'apt-get install postgresql', or 'docker compose up -d postgres', or set DATABASE_URL")
fi

# npm test and the benches work in throwaway schemas of the database `test`
# (or of DATABASE_URL when it is set): make it on the local Postgres if missing.
if [ -z "$user_database_url" ] && pg_ok && command -v psql >/dev/null; then
  test_db_url="${DATABASE_URL%/*}/test"
  if ! psql "$test_db_url" -Atqc 'select 1' >/dev/null 2>&1; then
    say "creating the database 'test' that npm test and the benches use"
    psql "$DATABASE_URL" -qc 'CREATE DATABASE test' >/dev/null || say "could not create the database 'test'; npm test needs it (or DATABASE_URL)"
  fi
fi

# Not needed to run the stack, only by npm test (the alert rules' unit tests): named, not required.
command -v promtool >/dev/null || say "note: npm test needs promtool to test the alert rules: 'apt-get install prometheus' (Debian), or promtool from https://prometheus.io/download/"
command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || say "note: npm test needs pgbouncer to test Postgres behind a pooler (it starts its own): 'apt-get install pgbouncer' (Debian)"

if ((${#missing[@]})); then
  say "cannot start; missing:"
  for m in "${missing[@]}"; do printf '  - %s\n' "$m"; done
  exit 1
fi

# --- install, build, migrate ----------------------------------------------------
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing dependencies (npm ci)"
  npm ci --no-audit --no-fund
fi
# From here on, node, npx and every tool run on the project's own Node (as under `npm test`, which npm runs with
# node_modules/.bin first on the PATH).
export PATH="$PWD/node_modules/.bin:$PATH"
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 24 ? 0 : 1)' 2>/dev/null; then
  say "the project's Node 24 is missing from node_modules/.bin (found $(node --version 2>&1)): run 'npm ci' again with the npm registry reachable"
  exit 1
fi
say "running on Node $(node --version)"
say "building"
npx turbo run build --output-logs=errors-only
say "applying migrations"
LOG_LEVEL=warn npx tsx --conditions=@vouch/source scripts/migrate.ts

# --- start every service ----------------------------------------------------------
start() { # name, extra env...
  local name=$1; shift
  local pidfile="$RUN/$name.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    say "$name already running (pid $(cat "$pidfile"))"; return
  fi
  env "$@" nohup node "services/$name/dist/main.js" >>"$RUN/logs/$name.log" 2>&1 &
  echo $! >"$pidfile"
  say "started $name (pid $!, log $RUN/logs/$name.log)"
}
for dir in services/*/; do
  name=$(basename "$dir")
  [ -f "$dir/src/main.ts" ] || continue
  if [ "$name" = vision-router ]; then
    # glibc keeps large images' decoding memory resident without it (MALLOC_ENV in its src/config.ts).
    start "$name" NODE_ENV=production MALLOC_MMAP_THRESHOLD_=131072
  else
    start "$name" NODE_ENV=production
  fi
done

wait_ready() { # name url
  for _ in $(seq 1 60); do
    curl -fsS "$2/readyz" >/dev/null 2>&1 && { say "$1 ready at $2"; return 0; }
    sleep 0.5
  done
  say "$1 is not ready; see $RUN/logs/$1.log"; return 1
}
wait_ready gateway "http://127.0.0.1:$PORT"
if [ -f services/ledger-critic/src/main.ts ]; then wait_ready ledger-critic "http://127.0.0.1:${LEDGER_CRITIC_HTTP_PORT:-9104}" || true; fi
if [ -f services/extractor/src/main.ts ]; then wait_ready extractor "http://127.0.0.1:${EXTRACTOR_HTTP_PORT:-9102}" || true; fi
if [ -f services/vision-router/src/main.ts ]; then wait_ready vision-router "http://127.0.0.1:${VISION_ROUTER_HTTP_PORT:-9101}" || true; fi
if [ -f services/board-dispatcher/src/main.ts ]; then wait_ready board-dispatcher "http://127.0.0.1:${BOARD_DISPATCHER_HTTP_PORT:-9103}" || true; fi

# --- a first key, so the stack can be called at once --------------------------------
if [ ! -s "$RUN/api-key" ]; then
  npm run --silent keys -- create --tenant local --scopes jobs:read,media:write,media:read,ledger:write,ledger:read,artifacts:write,artifacts:read,board:write,board:read,system:read,vision:write,vision:read,admin >"$RUN/api-key" 2>/dev/null
  say "created an API key for tenant 'local' in $RUN/api-key (admin scope; make narrower ones with npm run keys)"
fi
cat <<MSG

vouch is up. Try:
  curl -s -H "Authorization: Bearer \$(cat $RUN/api-key)" http://127.0.0.1:$PORT/v1/system/status
  curl -s http://127.0.0.1:$PORT/v1/openapi.json     # every operation
  curl -s -H "Authorization: Bearer \$(cat $RUN/api-key)" http://127.0.0.1:$PORT/v1/media/recent?surface=api\&chatKey=demo
Stop it with: npm run down
MSG
