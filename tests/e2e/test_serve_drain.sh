#!/usr/bin/env bash
# Graceful drain of the real server: SIGTERM lets a running stream finish
# (new requests get 503 meanwhile, /health says draining) and the process
# exits 0; past --drain-timeout running streams are cancelled and it still
# exits 0; a client polling on a kept-alive connection does not hold the exit;
# a second signal exits at once.
source "$(dirname "$0")/serve_common.sh"

H=(-H 'Content-Type: application/json')
# stream_body N: a streaming chat request for exactly N tokens
stream_body() {
  echo "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":$1,\"ignore_eos\":true,\"loop_guard\":false,\"stream\":true}"
}
# start_stream NAME URL N: runs the stream in the background into $E2E_TMP/NAME.sse; waits for its first token
start_stream() {
  local out="$E2E_TMP/$1.sse"
  curl -sN "$2/v1/chat/completions" "${H[@]}" -d "$(stream_body "$3")" >"$out" &
  STREAM_PID=$!
  for _ in $(seq 1 300); do
    grep -q '"content":"[^"]' "$out" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "stream $1 produced no token in 30 s"
}
# wait_exit PID SECONDS: sets EXIT_STATUS to the process's exit status; fails when it still runs after SECONDS
# (not in a $(…) subshell: only this shell can wait for its child)
wait_exit() {
  local pid=$1 limit=$2
  for _ in $(seq 1 $((limit * 10))); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && fail "server $pid still running ${limit} s after the signal"
  EXIT_STATUS=0
  wait "$pid" || EXIT_STATUS=$?
}

# --- a running stream finishes after SIGTERM; new requests are refused meanwhile; exit 0
start_server A
start_stream a "$A_URL" 150
kill -TERM "$A_PID"
for _ in $(seq 1 50); do grep -q "draining" "$E2E_TMP/A.log" && break; sleep 0.1; done
expect_status 503 POST "$A_URL/v1/chat/completions" "${H[@]}" -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":2}'
[ "$(json_get 'b["error"]["type"]')" = service_unavailable ] || fail "503 body: $(cat "$E2E_TMP/body")"
expect_status 503 POST "$A_URL/v1/messages" "${H[@]}" -d '{"max_tokens":2,"messages":[{"role":"user","content":"x"}]}'
[ "$(json_get 'b["type"]')" = error ] || fail "anthropic 503 shape: $(cat "$E2E_TMP/body")"
expect_status 503 GET "$A_URL/health"
[ "$(json_get 'b["status"]')" = draining ] || fail "/health while draining: $(cat "$E2E_TMP/body")"
wait_exit "$A_PID" 60
[ "$EXIT_STATUS" = 0 ] || fail "exit status after drain is $EXIT_STATUS, not 0"
wait "$STREAM_PID" || true
/usr/bin/python3 - "$E2E_TMP/a.sse" <<'PY' || fail "the drained stream did not finish normally"
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n\n") if l.strip()]
assert lines[-1] == "data: [DONE]", lines[-1]
events = [json.loads(l[6:]) for l in lines[:-1]]
finishes = [e["choices"][0]["finish_reason"] for e in events if e["choices"] and e["choices"][0]["finish_reason"]]
assert finishes == ["length"], finishes
text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
assert text, "no text"
PY
grep "llmesh serve: stopped" "$E2E_TMP/A.log" >/dev/null || fail "no 'stopped' line"

# --- past --drain-timeout the stream is cancelled, and the server still exits 0
start_server B --drain-timeout 1
start_stream b "$B_URL" 30000
kill -TERM "$B_PID"
wait_exit "$B_PID" 15
[ "$EXIT_STATUS" = 0 ] || fail "exit status after a drain timeout is $EXIT_STATUS, not 0"
wait "$STREAM_PID" || true
grep "drain: 1 requests still running" "$E2E_TMP/B.log" >/dev/null || fail "no drain-timeout log line"
grep '"finish_reason":"abort"' "$E2E_TMP/b.sse" >/dev/null || fail "the cancelled stream has no final chunk"

# --- a client that keeps its connection busy (a console tab polls each second) does not hold the exit
start_server D
/usr/bin/python3 - "${D_URL#http://}" <<'PY' >"$E2E_TMP/poller.log" 2>&1 &
import http.client, sys, time
conn = http.client.HTTPConnection(sys.argv[1], timeout=5)
try:
    while True:  # one kept-alive connection, a request every 0.2 s
        conn.request("GET", "/console/api/nodes")
        conn.getresponse().read()
        time.sleep(0.2)
except Exception as e:
    print("poller ended:", type(e).__name__)
PY
POLLER_PID=$!
sleep 1
kill -TERM "$D_PID"
wait_exit "$D_PID" 10
[ "$EXIT_STATUS" = 0 ] || fail "exit status with a polling client is $EXIT_STATUS, not 0"
wait "$POLLER_PID" || true
grep -q "poller ended" "$E2E_TMP/poller.log" || fail "the poller's connection was not closed: $(cat "$E2E_TMP/poller.log")"

# --- a second signal exits at once (128 + SIGTERM)
start_server C
start_stream c "$C_URL" 30000
kill -TERM "$C_PID"
for _ in $(seq 1 50); do grep -q "draining" "$E2E_TMP/C.log" && break; sleep 0.1; done
kill -TERM "$C_PID"
wait_exit "$C_PID" 5
[ "$EXIT_STATUS" = 143 ] || fail "second SIGTERM: exit status $EXIT_STATUS, not 143"
grep "second signal: exiting now" "$E2E_TMP/C.log" >/dev/null || fail "no second-signal line"
wait "$STREAM_PID" || true

echo "OK"
