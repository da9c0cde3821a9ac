#!/usr/bin/env bash
# A 2-rank `llmesh serve --tp 2` under `llmesh supervise`, with the disk KV tier:
#  1. a stopped (hung) worker: the request in flight fails in OpenAI's error
#     shape within --rank-timeout, /health says 503 "failed", the job exits non-zero,
#     and the supervisor restarts it; the agent session's next turn reads its
#     prefix back from the disk tier;
#  2. a killed worker: the job ends, the supervisor restarts it;
#  3. a stopped rank 0 (nothing answers /health): the supervisor's probes
#     fail, it kills the job's process group and restarts it;
#  4. SIGTERM to the supervisor: passed on, the job stops, no restart.
TINY_MODEL="$LLMESH_BINARY_DIR/models/tiny-qwen3-f32.gguf"
source "$(dirname "$0")/../e2e/serve_common.sh"
source "$(dirname "$0")/mpi_common.sh"

TURNS="python3 $SOURCE_DIR/tests/e2e/agent_turns.py"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
LOG="$E2E_TMP/supervise.log"
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])$2)" "$1"; }
health() { curl -s -m 2 -o "$E2E_TMP/body" -w '%{http_code}' "$URL/health" || true; }
runs() { grep -c "supervise: run [0-9]*: started" "$LOG" || true; }
# Until the current run answers /health and the supervisor has seen it do so
# (it watches a run's probes only after its first healthy one), within $1 s.
wait_healthy() {
  local i
  for i in $(seq 1 $(($1 * 5))); do
    [ "$(health)" = 200 ] && [ "$(grep -c "supervise: pid [0-9]* is healthy" "$LOG")" = "$(runs)" ] && return
    sleep 0.2
  done
  fail "/health not 200 within $1 s"
}
job_pid() { pgrep -P "$SUP" | head -1; }  # mpirun, the supervisor's child

"$LLMESH" supervise --health-url "$URL" --health-interval 1 --health-failures 2 --health-timeout 1 \
  --stop-grace 5 -- $MPIRUN -np 2 "$LLMESH" serve --model "$TINY_MODEL" --host 127.0.0.1 --port "$PORT" \
  --served-model-name tiny --threads 1 --tp 2 --rank-timeout 3 --kv-disk-dir "$E2E_TMP/kv" >"$LOG" 2>&1 &
SUP=$!
SERVER_PIDS+=("$SUP")
wait_healthy 60
$TURNS "$URL" "$E2E_TMP/session.json" 0 > /dev/null
turn1=$($TURNS "$URL" "$E2E_TMP/session.json" 1 --no-save)

# 1. A hung worker.
kill -STOP "$(rank_pid worker "$(job_pid)")"
started=$(date +%s)
expect_status 500 POST "$URL/v1/chat/completions" -H 'content-type: application/json' \
  -d '{"model":"tiny","messages":[{"role":"user","content":"hello"}],"max_tokens":8}'
[ "$(json_get 'b["error"]["type"]')" = server_error ] || fail "not an OpenAI error: $(cat "$E2E_TMP/body")"
json_get 'b["error"]["message"]' | grep -q "rank-timeout" || fail "the error does not say why: $(cat "$E2E_TMP/body")"
[ $(($(date +%s) - started)) -le 15 ] || fail "the failed request took $(($(date +%s) - started)) s (--rank-timeout 3)"
[ "$(health)" = 503 ] && [ "$(json_get 'b["status"]')" = failed ] || fail "/health after a lost rank: $(cat "$E2E_TMP/body")"
for _ in $(seq 1 150); do grep -q "exited with status [1-9]" "$LOG" && break; sleep 0.2; done
grep -q "the job lost a rank; ending it" "$LOG" || fail "rank 0 did not say it is ending the lost job"
grep -q "exited with status [1-9]" "$LOG" || fail "the job did not exit non-zero after the lost rank"
wait_healthy 60
[ "$(runs)" = 2 ] || fail "expected 2 runs, the log shows $(runs)"
after=$($TURNS "$URL" "$E2E_TMP/session.json" 1 --no-save)
[ "$(field "$after" '["content"]')" = "$(field "$turn1" '["content"]')" ] || fail "after the restart: $after vs $turn1"
[ "$(field "$after" '["cached_tokens"]')" -gt 0 ] || fail "the restarted job did not reuse the session's prefix: $after"

# 2. A killed worker.
kill -KILL "$(rank_pid worker "$(job_pid)")"
for _ in $(seq 1 150); do [ "$(runs)" = 3 ] && break; sleep 0.2; done
[ "$(runs)" = 3 ] || fail "no restart after a killed worker"
wait_healthy 60

# 3. A hung rank 0: only the health probes can tell.
kill -STOP "$(rank_pid 0 "$(job_pid)")"
for _ in $(seq 1 250); do [ "$(runs)" = 4 ] && break; sleep 0.2; done
[ "$(runs)" = 4 ] || fail "no restart after rank 0 stopped answering"
grep -q "health probes in a row failed" "$LOG" || fail "the log does not say the probes failed"
wait_healthy 60

# 4. SIGTERM stops it all, without a restart.
kill -TERM "$SUP"
wait_exit "$SUP" 60
[ "$(runs)" = 4 ] || fail "supervise restarted after SIGTERM"
pgrep -f "serve --model $TINY_MODEL --host 127.0.0.1 --port $PORT" > /dev/null && fail "ranks left running"
grep -q "not restarting" "$LOG" || fail "the log does not say it stopped on purpose"
echo "ok: lost, killed and hung ranks end the job cleanly and the supervisor brings it back with its sessions"
