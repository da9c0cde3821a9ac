# Sourced after serve_common.sh by the tests that drive the Claude Code CLI
# (npm @anthropic-ai/claude-code) headless.
#   claude_say_hi BASE_URL  -> runs `claude -p "say hi"` against BASE_URL and checks it
#                              succeeded with its full (~22K-token) prompt
CLAUDE="$NODE_MODULES/.bin/claude"
if [ ! -x "$CLAUDE" ]; then
  echo "SKIP: $CLAUDE missing (run scripts/fetch_assets.sh)"
  exit 77
fi

claude_say_hi() {
  local home="$E2E_TMP/home"
  mkdir -p "$home/work"
  # Random weights never end a turn by themselves (EOS is one token in 151K), and
  # Claude Code treats stop_reason max_tokens as an error: CLAUDE_CODE_EXTRA_BODY
  # (merged into every request body) adds stop sequences so the turn ends normally.
  ( cd "$home/work" &&
    HOME="$home" CLAUDE_CONFIG_DIR="$home/.claude" ANTHROPIC_BASE_URL="$1" ANTHROPIC_API_KEY=x \
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 DISABLE_ERROR_REPORTING=1 \
    CLAUDE_CODE_EXTRA_BODY='{"stop_sequences": ["e", "a", "o", "i", "u"]}' \
    timeout 150 "$CLAUDE" -p "say hi" --output-format json --model claude-sonnet-5-5 \
      >"$E2E_TMP/claude.json" 2>"$E2E_TMP/claude.log" ) ||
    fail "claude exited with $?: $(head -c 3000 "$E2E_TMP/claude.json") $(tail -5 "$E2E_TMP/claude.log")"
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
}
