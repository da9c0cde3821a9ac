#!/usr/bin/env bash
# `llmesh serve` on 4 MPI ranks (--tp 2 --pp 2, loopback, 1 thread each): an
# agent session evicted from the pool comes back from the host tier (each
# block's K/V gathered from and scattered to the 4 ranks), survives a SIGTERM
# restart on the disk tier, and every answer equals a single-process server's;
# 8 concurrent requests too. SIGTERM to rank 0 drains and stops the whole job
# (exit 0); a killed worker ends the job instead of hanging it.
TINY_MODEL="$LLMESH_BINARY_DIR/models/tiny-qwen3-f32.gguf"
source "$(dirname "$0")/../e2e/serve_common.sh"
source "$(dirname "$0")/mpi_common.sh"

KV="$E2E_TMP/kv"
TURNS="python3 $SOURCE_DIR/tests/e2e/agent_turns.py"
POOL=(--kv-cache-tokens 1536)
LAYOUT=(--tp 2 --pp 2)
field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])$2)" "$1"; }
cache_view() { curl -s "$1/v1/cache" > "$E2E_TMP/body"; json_get "$2"; }
concurrent() {  # 8 requests at once; prints their texts in order
  python3 - "$1" <<'PY'
import json, sys, threading, urllib.request
url, out = sys.argv[1], [None] * 8
def one(i):
    body = json.dumps({"model": "tiny", "prompt": f"Story {i}: " + "once upon a time " * (3 + 4 * i),
                       "max_tokens": 16, "temperature": 0, "ignore_eos": True}).encode()
    req = urllib.request.Request(url + "/v1/completions", body, {"content-type": "application/json"})
    out[i] = json.load(urllib.request.urlopen(req, timeout=120))["choices"][0]["text"]
ts = [threading.Thread(target=one, args=(i,)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps(out))
PY
}

# The single-process reference.
start_server cold --no-prefix-cache
for t in 0 1 2; do $TURNS "$cold_URL" "$E2E_TMP/session.json" $t > /dev/null; done
cold3=$($TURNS "$cold_URL" "$E2E_TMP/session.json" 3 --no-save)
cold_batch=$(concurrent "$cold_URL")
kill -TERM "$cold_PID"; wait "$cold_PID" 2>/dev/null || true

# 1. Eviction to the host tier and back, across the ranks.
SERVE_LAUNCH="$MPIRUN -np 4" start_server a "${POOL[@]}" "${LAYOUT[@]}" --kv-disk-dir "$KV" --kv-host-gib 0.25
grep -q "rank 3: stage 1 lane 1" "$E2E_TMP/a.log" || fail "the startup log does not show the 4-rank layout"
[ "$(concurrent "$a_URL")" = "$cold_batch" ] || fail "8 concurrent requests differ from the single-process server"
$TURNS "$a_URL" "$E2E_TMP/session.json" 2 --no-save > /dev/null
$TURNS "$a_URL" "$E2E_TMP/other.json" 0 --no-save --agent 1 > /dev/null
warm3=$($TURNS "$a_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$warm3" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "warm turn differs: $warm3 vs $cold3"
[ "$(cache_view "$a_URL" 'b["host"]["promotions"] + b["disk"]["promotions"]')" -gt 0 ] ||
  fail "nothing came back from the tiers: $(cat "$E2E_TMP/body")"

# 2. SIGTERM to rank 0 drains, stops the workers and the job exits 0; the restart reads the disk tier.
kill -TERM "$(rank_pid 0 "$a_PID")"
wait_exit "$a_PID" 60
[ "$exit_status" = 0 ] || fail "the job exited $exit_status after SIGTERM to rank 0"
grep -q "llmesh serve: stopped" "$E2E_TMP/a.log" || fail "rank 0 did not drain"
SERVE_LAUNCH="$MPIRUN -np 4" start_server b "${POOL[@]}" "${LAYOUT[@]}" --kv-disk-dir "$KV"
after=$($TURNS "$b_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$after" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "after restart: $after vs $cold3"
[ "$(cache_view "$b_URL" 'b["disk"]["promotions"]')" -gt 0 ] || fail "the restarted job did not read the disk tier"

# 3. A worker killed under load ends the job within seconds: no hang.
$TURNS "$b_URL" "$E2E_TMP/session.json" 4 --stream 2000 > /dev/null 2>&1 &
streamer=$!
sleep 0.5
kill -KILL "$(rank_pid worker "$b_PID")"
wait_exit "$b_PID" 30
[ "$exit_status" != 0 ] || fail "the job exited 0 after a worker was killed"
wait "$streamer" 2>/dev/null || true
echo "ok: 4-rank serve matches the single-process server; tiers, drain and a dead worker behave"
