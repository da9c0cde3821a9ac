#!/usr/bin/env bash
# KV tiers end to end, on the real server binary: an agent session's K/V
# survive eviction from the pool (host tier), a SIGTERM restart and a kill -9
# mid-stream (disk tier), and the restarted server gives the same greedy
# tokens as a cold one; flipped bytes, truncated files and another model's
# files are skipped, counted and never served; an unusable directory leaves
# the disk tier off with a warning while the server keeps serving.
source "$(dirname "$0")/serve_common.sh"

KV="$E2E_TMP/kv"
TURNS="python3 $SOURCE_DIR/tests/e2e/agent_turns.py"
POOL=(--kv-cache-tokens 1536)

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])$2)" "$1"; }
cache_view() { curl -s "$1/v1/cache" > "$E2E_TMP/body"; json_get "$2"; }
stop_server() {  # stop_server PID SIGNAL
  kill -"$2" "$1"
  wait "$1" 2>/dev/null || true
}

# A cold server (no cache at all): the reference tokens.
start_server cold --no-prefix-cache
for t in 0 1 2; do $TURNS "$cold_URL" "$E2E_TMP/session.json" $t > /dev/null; done
cold3=$($TURNS "$cold_URL" "$E2E_TMP/session.json" 3 --no-save)
stop_server "$cold_PID" TERM

# 1. Eviction: a second session larger than what is left of the pool pushes
#    the first one out; its next turn comes back from the host tier.
start_server a "${POOL[@]}" --kv-disk-dir "$KV" --kv-host-gib 0.25
$TURNS "$a_URL" "$E2E_TMP/session.json" 2 --no-save > /dev/null  # warm the session (turns 0-2 as the history)
$TURNS "$a_URL" "$E2E_TMP/other.json" 0 --no-save --agent 1 > /dev/null
warm3=$($TURNS "$a_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$warm3" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "warm turn differs from cold: $warm3 vs $cold3"
promoted=$(cache_view "$a_URL" 'b["host"]["promotions"] + b["disk"]["promotions"]')
[ "$promoted" -gt 0 ] || fail "nothing was promoted from the tiers: $(cat "$E2E_TMP/body")"
writes=$(cache_view "$a_URL" 'b["disk"]["writes"] + b["disk"]["queue_blocks"]')
[ "$writes" -gt 0 ] || fail "nothing was written to the disk tier"

# 2. SIGTERM, restart on the same directory: the same turn reads >= 95% of its prompt from disk.
stop_server "$a_PID" TERM
start_server b "${POOL[@]}" --kv-disk-dir "$KV"
grep -q "recovered [1-9][0-9]* blocks" "$E2E_TMP/b.log" || fail "the restart recovered nothing: $(grep 'disk tier' "$E2E_TMP/b.log")"
after=$($TURNS "$b_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$after" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "after restart: $after vs cold $cold3"
python3 -c "import sys; c,p=int(sys.argv[1]),int(sys.argv[2]); sys.exit(0 if c >= 0.95*p else 1)" \
  "$(field "$after" '["cached_tokens"]')" "$(field "$after" '["prompt_tokens"]')" \
  || fail "after restart only $(field "$after" '["cached_tokens"]') of $(field "$after" '["prompt_tokens"]') prompt tokens were cached"
[ "$(cache_view "$b_URL" 'b["disk"]["promotions"]')" -gt 0 ] || fail "the restarted turn did not read the disk tier"

# 3. kill -9 mid-stream: the next server serves no corrupt block and the same tokens.
$TURNS "$b_URL" "$E2E_TMP/session.json" 4 --stream 2000 > "$E2E_TMP/stream.txt" 2>/dev/null &
streamer=$!
for _ in $(seq 1 100); do [ "$(grep -c '^data: {' "$E2E_TMP/stream.txt" 2>/dev/null)" -ge 20 ] && break; sleep 0.1; done
stop_server "$b_PID" KILL
wait "$streamer" 2>/dev/null || true
start_server c "${POOL[@]}" --kv-disk-dir "$KV"
again=$($TURNS "$c_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$again" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "after kill -9: $again vs cold $cold3"
[ "$(cache_view "$c_URL" 'b["disk"]["bad_files"]')" = 0 ] || fail "kill -9 left bad files: $(cat "$E2E_TMP/body")"
stop_server "$c_PID" TERM

# 4. Flipped bytes and truncated files: skipped and counted, never served.
python3 - "$KV" <<'PY'
import os, sys
files = sorted(f for f in os.listdir(sys.argv[1]) if f.endswith(".kvb"))
for i, f in enumerate(files):
    p = os.path.join(sys.argv[1], f)
    if i % 2 == 0:  # a flipped payload byte: found by the checksum when read
        with open(p, "r+b") as fh:
            fh.seek(-100, 2); b = fh.read(1); fh.seek(-100, 2); fh.write(bytes([b[0] ^ 0x40]))
    else:           # cut short: found at startup
        os.truncate(p, os.path.getsize(p) // 2)
PY
start_server d "${POOL[@]}" --kv-disk-dir "$KV"
grep -q "skipped [1-9][0-9]* truncated" "$E2E_TMP/d.log" || fail "truncated files were not reported: $(grep 'disk tier' "$E2E_TMP/d.log")"
damaged=$($TURNS "$d_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$damaged" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "damaged files changed the output: $damaged"
[ "$(cache_view "$d_URL" 'b["disk"]["bad_files"]')" -gt 0 ] || fail "flipped bytes were not counted: $(cat "$E2E_TMP/body")"
stop_server "$d_PID" TERM

# 5. Another model on the same directory: this model's files are foreign to it, counted and left alone.
before=$(ls "$KV" | wc -l)
TINY_MODEL="$LLMESH_BINARY_DIR/models/tiny-llama3-q8_0.gguf" start_server e "${POOL[@]}" --kv-disk-dir "$KV"
[ "$(cache_view "$e_URL" 'b["disk"]["recovered"]["foreign"]')" -gt 0 ] || fail "foreign files not counted: $(cat "$E2E_TMP/body")"
[ "$(cache_view "$e_URL" 'b["disk"]["recovered"]["blocks"]')" = 0 ] || fail "another model's blocks were indexed"
stop_server "$e_PID" TERM
[ "$(ls "$KV" | wc -l)" -ge "$before" ] || fail "another model deleted this model's files"

# 6. An unusable directory: one warning, no disk tier, the server serves.
echo "not a directory" > "$E2E_TMP/blocker"
start_server f "${POOL[@]}" --kv-disk-dir "$E2E_TMP/blocker/kv"
grep -q "KV disk tier off" "$E2E_TMP/f.log" || fail "no warning for an unusable directory"
ok=$($TURNS "$f_URL" "$E2E_TMP/session.json" 3 --no-save)
[ "$(field "$ok" '["content"]')" = "$(field "$cold3" '["content"]')" ] || fail "without a disk tier: $ok"
[ "$(cache_view "$f_URL" 'b["disk"]["enabled"]')" = False ] || fail "the disk tier claims to be on"

# 7. /flush_cache?tiers=true empties the tiers too.
start_server g "${POOL[@]}" --kv-disk-dir "$KV"
$TURNS "$g_URL" "$E2E_TMP/session.json" 3 --no-save > /dev/null
expect_status 200 POST "$g_URL/flush_cache?tiers=true" -d ""
[ "$(cache_view "$g_URL" 'b["disk"]["blocks"]')" = 0 ] || fail "flush with tiers left disk blocks"
expect_status 400 POST "$g_URL/flush_cache?tiers=maybe" -d ""

# 8. cache_control pins the prompt's blocks for its TTL (Anthropic Messages); a bad ttl is a 400 naming it.
msg() {  # msg TTL
  printf '{"model":"tiny","max_tokens":4,"system":[{"type":"text","text":"%s","cache_control":{"type":"ephemeral","ttl":"%s"}}],"messages":[{"role":"user","content":"hi"}]}' \
    "$(python3 -c 'print(" ".join(["tools and rules"] * 80))')" "$1"
}
expect_status 200 POST "$g_URL/v1/messages" -H 'content-type: application/json' -d "$(msg 1h)"
[ "$(cache_view "$g_URL" 'b["pool"]["blocks_pinned"]')" -gt 0 ] || fail "cache_control pinned nothing: $(cat "$E2E_TMP/body")"
expect_status 400 POST "$g_URL/v1/messages" -H 'content-type: application/json' -d "$(msg 2h)"
[ "$(json_get 'b["type"]')" = error ] || fail "a bad ttl is not an Anthropic error: $(cat "$E2E_TMP/body")"
json_get 'b["error"]["message"]' | grep -q "system.0.cache_control.ttl" || fail "the error does not name the field: $(cat "$E2E_TMP/body")"
echo "PASS"
