#!/usr/bin/env bash
# The harmony chat format (gpt-oss) end to end, on the tiny Qwen3 model served
# with llmesh's harmony template (tools/templates/harmony.jinja) as its
# chat_template.jinja and no template in tokenizer_config.json, so the server
# reads the file and detects harmony from it. (Qwen's vocabulary has no harmony
# tokens, so they are plain text here; the o200k_harmony tokens are covered by
# the unit tests.) Checked: each API's effort reaches the prompt's "Reasoning:"
# line; forced calls (one function: the prompt opens the call; several: the
# grammar writes the header) come back as tool calls in all three APIs, streamed
# too; a JSON schema answer is the final channel's content; a tool-call history
# renders as harmony messages.
source "$(dirname "$0")/serve_common.sh"

HF_MODEL="$LLMESH_BINARY_DIR/models/tiny-qwen3"
[ -d "$HF_MODEL" ] || { echo "SKIP: $HF_MODEL missing (the generate_models fixture makes it)"; exit 0; }

DIR="$E2E_TMP/harmony-model"
mkdir -p "$DIR"
for f in config.json generation_config.json model.safetensors tokenizer.json; do
  [ -e "$HF_MODEL/$f" ] && ln -s "$HF_MODEL/$f" "$DIR/$f"
done
/usr/bin/python3 - "$HF_MODEL/tokenizer_config.json" "$DIR/tokenizer_config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config.pop("chat_template", None)
json.dump(config, open(sys.argv[2], "w"))
PY
cp "$SOURCE_DIR/tools/templates/harmony.jinja" "$DIR/chat_template.jinja"

H=(-H 'Content-Type: application/json')
MSG='[{"role":"user","content":"Weather in Oslo?"}]'
WEATHER='{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1}},
  "required":["city","days"]}'
TOOLS="[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":$WEATHER}}]"
TWO_TOOLS="[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":$WEATHER}},
  {\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}}]"

# check_weather ARGUMENTS: {city: string, days: integer >= 1}, given as JSON text or as an object.
check_weather() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
a = json.loads(sys.argv[1])
if isinstance(a, str): a = json.loads(a)
assert isinstance(a, dict) and isinstance(a["city"], str), a
assert isinstance(a["days"], int) and not isinstance(a["days"], bool) and a["days"] >= 1, a
PY
}

TINY_MODEL="$DIR" start_server S

# --- the effort reaches the template's Reasoning line (absent: its medium)
for pair in "high:high" "minimal:low" "none:low" ":medium"; do
  effort=${pair%%:*} want=${pair##*:}
  field=""
  [ -n "$effort" ] && field=",\"reasoning_effort\":\"$effort\""
  expect_status 200 POST "$S_URL/apply-template" "${H[@]}" -d "{\"messages\":$MSG$field}"
  prompt=$(json_get 'b["prompt"]')
  grep -q "^Reasoning: $want\$" <<<"$prompt" || fail "effort '$effort': $prompt"
  [[ "$prompt" == *"<|start|>assistant" ]] || fail "generation prompt: $prompt"
done
expect_status 200 POST "$S_URL/apply-template" "${H[@]}" -d "{\"messages\":$MSG,\"tools\":$TOOLS}"
prompt=$(json_get 'b["prompt"]')
grep -q "^type get_weather = (_: {" <<<"$prompt" || fail "tools: $prompt"

# --- OpenAI chat, tool_choice required with one function (the prompt opens the call)
for seed in 1 2; do
  expect_status 200 POST "$S_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":120,
    \"seed\":$seed,\"temperature\":1.0,\"tools\":$TOOLS,\"tool_choice\":\"required\"}"
  [ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "required: $(cat "$E2E_TMP/body")"
  [ "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["name"]')" = get_weather ] ||
    fail "name: $(cat "$E2E_TMP/body")"
  check_weather "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')" ||
    fail "arguments: $(cat "$E2E_TMP/body")"
done

# --- several functions: the grammar writes the header, the parser reads it back
expect_status 200 POST "$S_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":150,
  \"seed\":3,\"tools\":$TWO_TOOLS,\"tool_choice\":\"required\"}"
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "two tools: $(cat "$E2E_TMP/body")"
[ -z "$(json_get 'b["choices"][0]["message"]["content"] or ""')" ] || fail "header leaked: $(cat "$E2E_TMP/body")"

# --- streamed, a named tool: the argument deltas concatenate to the object
expect_status 200 POST "$S_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":120,
  \"seed\":5,\"stream\":true,\"tools\":$TWO_TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}}"
ARGS=$(/usr/bin/python3 - "$E2E_TMP/body" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n\n") if l.startswith("data: ")]
assert lines[-1] == "data: [DONE]", lines[-1]
events = [json.loads(l[6:]) for l in lines[:-1]]
calls = [c for e in events if e["choices"] for c in e["choices"][0]["delta"].get("tool_calls") or []]
assert calls and calls[0]["function"]["name"] == "get_weather", calls
assert not any(e["choices"][0]["delta"].get("content") for e in events if e["choices"]), "call text in content"
print("".join(c["function"].get("arguments") or "" for c in calls))
PY
) || fail "streamed: $(head -c 800 "$E2E_TMP/body")"
check_weather "$ARGS" || fail "streamed arguments: $ARGS"

# --- Anthropic Messages: tool_choice any gives a tool_use block
expect_status 200 POST "$S_URL/v1/messages" "${H[@]}" -d "{\"model\":\"tiny\",\"max_tokens\":120,
  \"messages\":$MSG,\"tools\":[{\"name\":\"get_weather\",\"input_schema\":$WEATHER}],\"tool_choice\":{\"type\":\"any\"}}"
[ "$(json_get 'b["stop_reason"]')" = tool_use ] || fail "anthropic: $(cat "$E2E_TMP/body")"
check_weather "$(json_get 'json.dumps([c for c in b["content"] if c["type"] == "tool_use"][0]["input"])')" ||
  fail "anthropic input: $(cat "$E2E_TMP/body")"

# --- Responses: tool_choice required gives a function_call item
expect_status 200 POST "$S_URL/v1/responses" "${H[@]}" -d "{\"model\":\"tiny\",\"max_output_tokens\":120,
  \"input\":\"Weather in Oslo?\",\"tools\":[{\"type\":\"function\",\"name\":\"get_weather\",\"parameters\":$WEATHER}],
  \"tool_choice\":\"required\",\"reasoning\":{\"effort\":\"high\"}}"
check_weather "$(json_get '[o for o in b["output"] if o["type"] == "function_call"][0]["arguments"]')" ||
  fail "responses: $(cat "$E2E_TMP/body")"

# --- a JSON schema answer is the final channel's content
expect_status 200 POST "$S_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":120,
  \"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"w\",\"schema\":$WEATHER}}}"
check_weather "$(json_get 'b["choices"][0]["message"]["content"]')" || fail "json schema: $(cat "$E2E_TMP/body")"

# --- history: a call with its reasoning, its result; rendered as harmony messages
HISTORY='[{"role":"user","content":"Weather in Oslo?"},
  {"role":"assistant","content":null,"reasoning_content":"Call the tool.","tool_calls":[{"id":"call_1","type":"function",
    "function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\",\"days\":1}"}}]},
  {"role":"tool","tool_call_id":"call_1","content":"sunny"}]'
expect_status 200 POST "$S_URL/apply-template" "${H[@]}" -d "{\"messages\":$HISTORY,\"tools\":$TOOLS}"
prompt=$(json_get 'b["prompt"]')
for want in '<|start|>assistant<|channel|>analysis<|message|>Call the tool.<|end|>' \
            '<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>{"city":"Oslo","days":1}<|call|>' \
            '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>sunny<|end|><|start|>assistant'; do
  [[ "$prompt" == *"$want"* ]] || fail "history lacks $want: $prompt"
done
expect_status 200 POST "$S_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$HISTORY,\"max_tokens\":5,\"tools\":$TOOLS}"

# --- tiny-gptoss (random weights, the o200k_harmony tokenizer) with the same template, where this
# build can load it: the harmony tokens are special tokens here, stop tokens included.
GPTOSS="$LLMESH_BINARY_DIR/models/tiny-gptoss"
if [ -d "$GPTOSS" ] && "$LLMESH" inspect --model "$GPTOSS" >/dev/null 2>&1; then
  GDIR="$E2E_TMP/gptoss-model"
  mkdir -p "$GDIR"
  for f in "$GPTOSS"/*; do ln -s "$f" "$GDIR/$(basename "$f")"; done
  [ -e "$GDIR/chat_template.jinja" ] || cp "$SOURCE_DIR/tools/templates/harmony.jinja" "$GDIR/chat_template.jinja"
  TINY_MODEL="$GDIR" start_server G
  expect_status 200 POST "$G_URL/apply-template" "${H[@]}" -d "{\"messages\":$MSG,\"reasoning_effort\":\"high\"}"
  prompt=$(json_get 'b["prompt"]')
  grep -q "^Reasoning: high\$" <<<"$prompt" || fail "gptoss effort: $prompt"
  expect_status 200 POST "$G_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":120,
    \"tools\":$TOOLS,\"tool_choice\":\"required\"}"
  [ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "gptoss required: $(cat "$E2E_TMP/body")"
  check_weather "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')" ||
    fail "gptoss arguments: $(cat "$E2E_TMP/body")"
  expect_status 200 POST "$G_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":150,
    \"seed\":3,\"tools\":$TWO_TOOLS,\"tool_choice\":\"required\"}"
  [ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "gptoss two tools: $(cat "$E2E_TMP/body")"
  # Free generation: answered, whatever the random weights write.
  expect_status 200 POST "$G_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":40}"
  json_get 'b["choices"][0]["message"]' >/dev/null || fail "gptoss free: $(cat "$E2E_TMP/body")"
else
  echo "note: tiny-gptoss not loadable by this build; its part skipped"
fi

echo "harmony OK"
