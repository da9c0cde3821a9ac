#!/usr/bin/env bash
# Faults behind `llmesh route`: a client that leaves mid-stream cancels the
# upstream generation; killing one of three upstreams moves only its
# sessions (the others stay put), and no request fails that had not started
# streaming (the first one to hit the dead upstream is retried elsewhere before
# its first byte); a stream whose upstream dies mid-way ends in an error event
# and is not retried; the dead upstream is rechecked and comes back when it
# restarts on the same port.
source "$(dirname "$0")/route_common.sh"

start_server A
start_server B
start_server C
# Turn 2 goes out as 15 concurrent requests; --load-factor 4 keeps the bounded
# load from moving sessions off an upstream that has 8 of them in flight at once
# (that overflow is correct, and tested in test_route_sessions and the unit tests;
# here only the failure may move sessions).
start_router R --upstream "$A_URL,name=a" --upstream "$B_URL,name=b" --upstream "$C_URL,name=c" \
  --health-interval-ms 200 --load-factor 4
checks="$SOURCE_DIR/tests/e2e/route_checks.py"

# A client that leaves mid-stream cancels the upstream's generation.
printf '{"a": "%s", "b": "%s", "c": "%s"}' "$A_URL" "$B_URL" "$C_URL" > "$E2E_TMP/urls.json"
/usr/bin/python3 "$checks" disconnect "$R_URL" "$E2E_TMP/urls.json" || fail "client disconnect"

/usr/bin/python3 "$checks" place "$R_URL" 15 "$E2E_TMP/placed.json" || fail "turn 1"
# Kill the upstream holding the most sessions; send turn 2 at once, before any health check notices.
dead=$(/usr/bin/python3 -c "import json,collections; p=json.load(open('$E2E_TMP/placed.json')); print(collections.Counter(p.values()).most_common(1)[0][0])")
dead_upper=$(tr a-z A-Z <<<"$dead")
dead_pid_var="${dead_upper}_PID"
dead_url_var="${dead_upper}_URL"
kill -9 "${!dead_pid_var}"
wait "${!dead_pid_var}" 2>/dev/null || true
/usr/bin/python3 "$checks" failover "$R_URL" "$E2E_TMP/placed.json" "$dead" || fail "failover"

# Mid-stream: kill the upstream serving a long stream after 5 chunks.
printf '{"a": %s, "b": %s, "c": %s}' "$A_PID" "$B_PID" "$C_PID" > "$E2E_TMP/pids.json"
/usr/bin/python3 "$checks" midstream "$R_URL" "$E2E_TMP/pids.json" "$E2E_TMP/midstream_upstream" || fail "mid-stream failure"
expect_status 200 GET "$R_URL/v1/route"
[ "$(json_get 'sum(u["healthy"] for u in b["upstreams"])')" = 1 ] || fail "two upstreams should be down: $(cat "$E2E_TMP/body")"
# With one upstream left, requests still succeed.
expect_status 200 POST "$R_URL/v1/chat/completions" -H 'Content-Type: application/json' -H 'x-session-id: s1' \
  -d '{"model":"tiny","messages":[{"role":"user","content":"still there?"}],"max_tokens":2}'

# The first dead upstream restarts on its port: the health checker brings it back.
port="${!dead_url_var##*:}"
"$LLMESH" serve --model "$TINY_MODEL" --host 127.0.0.1 --port "$port" --served-model-name tiny --threads 1 \
  >"$E2E_TMP/restarted.log" 2>&1 &
SERVER_PIDS+=("$!")
back=""
for _ in $(seq 1 100); do
  expect_status 200 GET "$R_URL/v1/route"
  if [ "$(json_get "[u['healthy'] for u in b['upstreams'] if u['name'] == '$dead'][0]")" = True ]; then back=1; break; fi
  sleep 0.2
done
[ -n "$back" ] || fail "$dead restarted but the router does not see it healthy: $(cat "$E2E_TMP/body")"
echo "PASS test_route_failover"
