#!/usr/bin/env bash
# The XML tool-call formats end to end: the tiny Qwen3 model served with its
# chat template replaced by a small Qwen3-Coder-style one (then a GLM-4.5-style
# one), so the server detects that format from the template. A forced call
# (tool_choice required / any / named) must come back as a tool call whose
# arguments are JSON typed by the tool's schema, in all three APIs (OpenAI chat
# streamed and not, Anthropic tool_use, Responses function_call), and a history
# with a tool call must reach the template with its arguments as a mapping.
source "$(dirname "$0")/serve_common.sh"

HF_MODEL="$LLMESH_BINARY_DIR/models/tiny-qwen3"
[ -d "$HF_MODEL" ] || { echo "SKIP: $HF_MODEL missing (the generate_models fixture makes it)"; exit 0; }

# model_with_template DIR TEMPLATE_FILE: DIR holds the tiny model with TEMPLATE_FILE as its chat template.
model_with_template() {
  mkdir -p "$1"
  for f in config.json generation_config.json model.safetensors tokenizer.json; do
    [ -e "$HF_MODEL/$f" ] && ln -s "$HF_MODEL/$f" "$1/$f"
  done
  /usr/bin/python3 - "$HF_MODEL/tokenizer_config.json" "$2" "$1/tokenizer_config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["chat_template"] = open(sys.argv[2]).read()
json.dump(config, open(sys.argv[3], "w"))
PY
}

# Written for this test in Qwen3-Coder's call syntax; it refuses tool-call
# arguments that are not a mapping, as `arguments|items` does in jinja2.
cat >"$E2E_TMP/qwen3_coder.jinja" <<'JINJA'
{%- if tools %}{{- '<|im_start|>system\nFunctions:\n' }}
{%- for tool in tools %}{{- '<function>' + tool.function.name + '</function>\n' }}{%- endfor %}
{{- 'Call one as <tool_call>\n<function=NAME>\n<parameter=NAME>\nvalue\n</parameter>\n</function>\n</tool_call><|im_end|>\n' }}
{%- endif %}
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{{- '<|im_start|>assistant' }}
{%- if message.content %}{{- '\n' + message.content }}{%- endif %}
{%- if message.tool_calls %}{%- for tool_call in message.tool_calls %}
{%- set call = tool_call.function %}
{%- if call.arguments is not mapping %}{{- raise_exception('tool call arguments must be a mapping') }}{%- endif %}
{{- '\n<tool_call>\n<function=' + call.name + '>\n' }}
{%- for key, value in call.arguments|items %}
{{- '<parameter=' + key + '>\n' }}
{%- if value is mapping or (value is sequence and value is not string) %}{{- value | tojson }}{%- else %}{{- value | string }}{%- endif %}
{{- '\n</parameter>\n' }}
{%- endfor %}
{{- '</function>\n</tool_call>' }}
{%- endfor %}{%- endif %}
{{- '<|im_end|>\n' }}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>user\n<tool_response>\n' + message.content + '\n</tool_response><|im_end|>\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
JINJA

# In GLM-4.5's call syntax.
cat >"$E2E_TMP/glm45.jinja" <<'JINJA'
{%- for m in messages %}
{%- if m.role == 'assistant' %}<|assistant|>
{%- if m.content %}{{ '\n' + m.content }}{% endif %}
{%- if m.tool_calls %}{%- for tc in m.tool_calls %}
{{- '\n<tool_call>' + tc.function.name }}
{%- for k, v in tc.function.arguments.items() %}
{{- '\n<arg_key>' + k + '</arg_key>\n<arg_value>' }}{{ v | tojson if v is not string else v }}{{ '</arg_value>' }}
{%- endfor %}
{{- '\n</tool_call>' }}
{%- endfor %}{%- endif %}
{%- else %}<|{{ m.role }}|>{{ '\n' + m.content }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|assistant|>{% endif %}
JINJA

model_with_template "$E2E_TMP/qwen3-coder" "$E2E_TMP/qwen3_coder.jinja"
model_with_template "$E2E_TMP/glm45" "$E2E_TMP/glm45.jinja"

H=(-H 'Content-Type: application/json')
MSG='[{"role":"user","content":"Edit the file."}]'
EDIT='{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer","minimum":1},
  "dry_run":{"type":"boolean"},"labels":{"type":"array","items":{"enum":["x","y"]},"maxItems":2},
  "opts":{"type":"object","properties":{"depth":{"type":"integer"}},"required":["depth"]}},
  "required":["path","line","dry_run","labels","opts"]}'
TOOLS="[{\"type\":\"function\",\"function\":{\"name\":\"edit\",\"parameters\":$EDIT}}]"

# check_edit ARGUMENTS: a JSON object (given as text, or already an object) with each value of its schema's type.
check_edit() {
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
a = json.loads(sys.argv[1])
if isinstance(a, str): a = json.loads(a)
assert isinstance(a, dict), a
assert isinstance(a["path"], str), a
assert isinstance(a["line"], int) and not isinstance(a["line"], bool) and a["line"] >= 1, a
assert isinstance(a["dry_run"], bool), a
assert isinstance(a["labels"], list) and len(a["labels"]) <= 2 and all(x in ("x", "y") for x in a["labels"]), a
assert isinstance(a["opts"], dict) and isinstance(a["opts"]["depth"], int), a
PY
}

TINY_MODEL="$E2E_TMP/qwen3-coder" start_server Q

# --- OpenAI chat: tool_choice required, several seeds
for seed in 1 2; do
  expect_status 200 POST "$Q_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":250,\"seed\":$seed,
    \"temperature\":1.0,\"tools\":$TOOLS,\"tool_choice\":\"required\"}"
  [ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "qwen required: $(cat "$E2E_TMP/body")"
  [ "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["name"]')" = edit ] || fail "qwen name"
  check_edit "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')" ||
    fail "qwen arguments: $(cat "$E2E_TMP/body")"
done

# --- OpenAI chat streamed, a named tool: the argument deltas concatenate to the typed object
expect_status 200 POST "$Q_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":250,\"seed\":5,
  \"stream\":true,\"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"edit\"}}}"
ARGS=$(/usr/bin/python3 - "$E2E_TMP/body" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n\n") if l.startswith("data: ")]
assert lines[-1] == "data: [DONE]", lines[-1]
events = [json.loads(l[6:]) for l in lines[:-1]]
calls = [c for e in events if e["choices"] for c in e["choices"][0]["delta"].get("tool_calls") or []]
assert calls and calls[0]["function"]["name"] == "edit", calls
assert not any(e["choices"][0]["delta"].get("content") for e in events if e["choices"]), "tool call text leaked into content"
print("".join(c["function"].get("arguments") or "" for c in calls))
PY
) || fail "qwen streamed: $(head -c 800 "$E2E_TMP/body")"
check_edit "$ARGS" || fail "qwen streamed arguments: $ARGS"

# --- Anthropic Messages: tool_choice any gives a tool_use block with a typed input object
expect_status 200 POST "$Q_URL/v1/messages" "${H[@]}" -d "{\"model\":\"tiny\",\"max_tokens\":250,
  \"messages\":[{\"role\":\"user\",\"content\":\"Edit the file.\"}],
  \"tools\":[{\"name\":\"edit\",\"input_schema\":$EDIT}],\"tool_choice\":{\"type\":\"any\"}}"
[ "$(json_get 'b["stop_reason"]')" = tool_use ] || fail "anthropic: $(cat "$E2E_TMP/body")"
check_edit "$(json_get 'json.dumps([c for c in b["content"] if c["type"] == "tool_use"][0]["input"])')" ||
  fail "anthropic input: $(cat "$E2E_TMP/body")"

# --- Responses: tool_choice required gives a function_call item
expect_status 200 POST "$Q_URL/v1/responses" "${H[@]}" -d "{\"model\":\"tiny\",\"max_output_tokens\":250,
  \"input\":\"Edit the file.\",\"tools\":[{\"type\":\"function\",\"name\":\"edit\",\"parameters\":$EDIT}],
  \"tool_choice\":\"required\"}"
check_edit "$(json_get '[o for o in b["output"] if o["type"] == "function_call"][0]["arguments"]')" ||
  fail "responses: $(cat "$E2E_TMP/body")"

# --- history: an assistant tool call (arguments as OpenAI's JSON text) and its result render
HISTORY='[{"role":"user","content":"Edit the file."},
  {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
    "function":{"name":"edit","arguments":"{\"path\":\"a.py\",\"line\":3,\"dry_run\":false,\"labels\":[],\"opts\":{\"depth\":1}}"}}]},
  {"role":"tool","tool_call_id":"call_1","content":"done"}]'
expect_status 200 POST "$Q_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$HISTORY,\"max_tokens\":5,\"tools\":$TOOLS}"

# --- the GLM-4.5 syntax, the same checks on chat completions
TINY_MODEL="$E2E_TMP/glm45" start_server G
for seed in 1; do
  expect_status 200 POST "$G_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":250,\"seed\":$seed,
    \"temperature\":1.0,\"tools\":$TOOLS,\"tool_choice\":\"required\"}"
  [ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "glm required: $(cat "$E2E_TMP/body")"
  check_edit "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')" ||
    fail "glm arguments: $(cat "$E2E_TMP/body")"
done
expect_status 200 POST "$G_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$HISTORY,\"max_tokens\":5,\"tools\":$TOOLS}"

echo "xml tool calls OK"
