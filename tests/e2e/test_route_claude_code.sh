#!/usr/bin/env bash
# The Claude Code CLI, headless, completes a turn through `llmesh route` in
# front of two `llmesh serve` processes, unchanged: /v1/messages?beta=true
# streaming with its ~22K-token prompt. Every request of the session carries
# its metadata.user_id, so all of them land on one upstream (the request log
# shows it), and the second turn reads the first one's prefix from the cache.
source "$(dirname "$0")/route_common.sh"
skip_on_scalar_kernels "Claude Code's ~22K-token first turn within its 150 s timeout"
CLAUDE="$NODE_MODULES/.bin/claude"
if [ ! -x "$CLAUDE" ]; then
  echo "SKIP: $CLAUDE missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server S --ctx-size 40960
start_server T --ctx-size 40960
start_router R --upstream "$S_URL,name=s" --upstream "$T_URL,name=t" --log-requests "$E2E_TMP/requests.jsonl"
home="$E2E_TMP/home"
mkdir -p "$home/work"
# Random weights never end a turn by themselves (EOS is one token in 151K), and
# Claude Code treats stop_reason max_tokens as an error: CLAUDE_CODE_EXTRA_BODY
# (merged into every request body) adds stop sequences so the turn ends normally.
( cd "$home/work" &&
  HOME="$home" CLAUDE_CONFIG_DIR="$home/.claude" ANTHROPIC_BASE_URL="$R_URL" ANTHROPIC_API_KEY=x \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 \
  CLAUDE_CODE_EXTRA_BODY='{"stop_sequences": ["e", "a", "o", "i", "u"]}' \
  timeout 150 "$CLAUDE" -p "say hi" --output-format json --model claude-sonnet-5-5 \
    >"$E2E_TMP/claude.json" 2>"$E2E_TMP/claude.log" ) || fail "claude exited with $?: $(head -c 3000 "$E2E_TMP/claude.json") $(tail -5 "$E2E_TMP/claude.log")"
/usr/bin/python3 - "$E2E_TMP/claude.json" <<'PY' || fail "claude result: $(head -c 800 "$E2E_TMP/claude.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["type"] == "result" and r["subtype"] == "success", r
assert r["is_error"] is False, r
u = r["usage"]
prompt = u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
assert prompt > 15000, f"Claude Code's full prompt should be ~22K tokens, got {prompt}"
print(f"claude -p completed: {r['num_turns']} turn(s), {prompt} prompt tokens, {u['output_tokens']} output tokens, "
      f"{r['duration_ms']} ms, result {r['result']!r}")
PY
/usr/bin/python3 - "$E2E_TMP/requests.jsonl" <<'PY' || fail "request log: $(cat "$E2E_TMP/requests.jsonl")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
gen = [r for r in lines if r["path"] == "/v1/messages"]
assert gen, lines
assert all(r["session_source"] == "anthropic_user_id" for r in gen), gen
assert len({r["upstream"] for r in gen}) == 1, [r["upstream"] for r in gen]
assert all(r["status"] == 200 for r in gen), gen
print(f"{len(gen)} /v1/messages request(s) of one session, all on {gen[0]['upstream']}; "
      f"cached tokens {[r.get('cached_tokens') for r in gen]}")
PY
echo "PASS test_route_claude_code"
