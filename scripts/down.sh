#!/usr/bin/env bash
# Stops the services `npm run up` started (SIGTERM: running jobs finish first).
set -uo pipefail
cd "$(dirname "$0")/.."
for pidfile in .run/*.pid; do
  [ -e "$pidfile" ] || continue
  name=$(basename "$pidfile" .pid)
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" && echo "vouch: stopping $name (pid $pid)"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$pidfile"
done
