#!/usr/bin/env bash
# The Codex CLI (npm @openai/codex) completes a turn against `llmesh serve`
# through /v1/responses: a fresh CODEX_HOME whose config.toml defines a model
# provider with wire_api = "responses" and selects it (the config in docs/codex.md).
# The tiny random model never stops on its own, so the turn uses
# --output-schema: text.format json_schema makes the answer a small JSON
# object that ends by construction (skipped while constrained decoding is missing).
source "$(dirname "$0")/serve_common.sh"
CODEX="$NODE_MODULES/.bin/codex"
if [ ! -x "$CODEX" ] || ! command -v node >/dev/null; then
  echo "SKIP: $CODEX missing (run scripts/fetch_assets.sh)"
  exit 77
fi
# Codex's prompt (instructions + tools) is ~10K tokens.
start_server S --ctx-size 32768

schema="$E2E_TMP/schema.json"
cat >"$schema" <<'JSON'
{"type": "object", "properties": {"answer": {"type": "string", "maxLength": 12}},
 "required": ["answer"], "additionalProperties": false}
JSON
# Probe: does this build have structured output?
probe=$(curl -s -o /dev/null -w '%{http_code}' "$S_URL/v1/responses" -H 'content-type: application/json' \
  -d "{\"input\": \"x\", \"max_output_tokens\": 64, \"reasoning\": {\"effort\": \"none\"},
       \"text\": {\"format\": {\"type\": \"json_schema\", \"name\": \"probe\", \"schema\": $(cat "$schema")}}}")
if [ "$probe" = 501 ]; then
  echo "SKIP: constrained decoding (text.format json_schema) is not available yet"
  exit 77
fi
[ "$probe" = 200 ] || fail "json_schema probe: status $probe"

export CODEX_HOME="$E2E_TMP/codex-home"
mkdir -p "$CODEX_HOME" "$E2E_TMP/work"
cat >"$CODEX_HOME/config.toml" <<TOML
model = "tiny"
model_provider = "llmesh"
model_reasoning_effort = "minimal"
model_context_window = 32768
model_auto_compact_token_limit = 28000
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.llmesh]
name = "llmesh"
base_url = "$S_URL/v1"
wire_api = "responses"
env_key = "LLMESH_API_KEY"
request_max_retries = 0
stream_max_retries = 0
TOML
export LLMESH_API_KEY=unused

# run_codex N PROMPT: one `codex exec` turn; its JSONL events in $E2E_TMP/codexN.jsonl, last message in lastN.txt.
run_codex() {
  local n=$1 prompt=$2
  (cd "$E2E_TMP/work" && timeout 180 "$CODEX" exec --strict-config --skip-git-repo-check --ephemeral --json \
     --output-schema "$schema" -o "$E2E_TMP/last$n.txt" "$prompt" \
     >"$E2E_TMP/codex$n.jsonl" 2>"$E2E_TMP/codex$n.log") ||
    { cat "$E2E_TMP/codex$n.jsonl" >&2; tail -30 "$E2E_TMP/codex$n.log" >&2; fail "codex exec $n failed"; }
  grep -q '"type":"turn.completed"' "$E2E_TMP/codex$n.jsonl" ||
    { cat "$E2E_TMP/codex$n.jsonl" >&2; fail "codex run $n did not complete the turn"; }
  [ -s "$E2E_TMP/last$n.txt" ] || fail "codex run $n wrote no last message"
}
run_codex 1 "Reply with a JSON object."
# A second session with the same instructions and tools reuses the first one's prompt from the prefix cache.
run_codex 2 "Reply with another JSON object."

/usr/bin/python3 - "$E2E_TMP" <<'PY' || fail "codex output"
import json, sys
tmp = sys.argv[1]
def turn_usage(n):
    events = [json.loads(line) for line in open(f"{tmp}/codex{n}.jsonl") if line.startswith("{")]
    return [e["usage"] for e in events if e.get("type") == "turn.completed"][0]
for n in (1, 2):
    answer = json.load(open(f"{tmp}/last{n}.txt"))
    assert isinstance(answer, dict) and isinstance(answer.get("answer"), str), answer
first, second = turn_usage(1), turn_usage(2)
assert first["input_tokens"] > 2000, first  # Codex's own large prompt reached the server
assert second["cached_input_tokens"] >= 0.9 * second["input_tokens"], second
print("codex usage:", first, second)
PY
echo "PASS test_responses_codex_cli"
