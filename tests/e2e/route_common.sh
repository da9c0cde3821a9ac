# Sourced by tests/e2e/test_route_*.sh: serve_common.sh (start_server, fail,
# expect_status) plus start_router, which starts `llmesh route` on a free
# loopback port in front of the given upstreams and kills it on exit.
#   start_router NAME [route flags...]   -> sets ${NAME}_URL and ${NAME}_PID; waits for /health 200
source "$(dirname "${BASH_SOURCE[0]}")/serve_common.sh"

start_router() {
  local name=$1
  shift
  local log="$E2E_TMP/$name.log"
  : >"$log"  # exists before the background job opens it: the sed below must not race it
  "$LLMESH" route --host 127.0.0.1 --port 0 "$@" >"$log" 2>&1 &
  local pid=$!
  SERVER_PIDS+=("$pid")
  local url=""
  for _ in $(seq 1 100); do
    url=$(sed -n 's/.*ready at \(http:[^ ]*\).*/\1/p' "$log" | head -1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || fail "router $name exited during startup"
    sleep 0.1
  done
  [ -n "$url" ] || fail "router $name not ready after 10 s"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" = 200 ] || fail "$name: /health is not 200"
  printf -v "${name}_URL" '%s' "$url"
  printf -v "${name}_PID" '%s' "$pid"
}
