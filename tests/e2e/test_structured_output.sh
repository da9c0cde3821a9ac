#!/usr/bin/env bash
# Constrained decoding end to end: the tiny random-weight Qwen3 model, whose
# unconstrained output is noise, must produce JSON that parses and validates
# for response_format json_schema / json_object and for forced tool calls
# (tool_choice "required" and a named function), streaming or not.
source "$(dirname "$0")/serve_common.sh"

start_server S
U=$S_URL
H=(-H 'Content-Type: application/json')
MSG='[{"role":"user","content":"Describe a person."}]'
PERSON='{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0},
  "tags":{"type":"array","items":{"enum":["a","b","c"]},"maxItems":3},"address":{"type":"object",
  "properties":{"city":{"type":"string"},"zip":{"type":["string","null"]}},"required":["city"]}},
  "required":["name","age","address"]}'
WEATHER='{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]},"days":{"type":"integer","minimum":1}},"required":["city","unit"]}'
SEARCH='{"type":"object","properties":{"query":{"type":"string","minLength":1},"limit":{"type":"integer"},"exact":{"type":"boolean"}},"required":["query"]}'
TOOLS="[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":$WEATHER}},
        {\"type\":\"function\",\"function\":{\"name\":\"search\",\"parameters\":$SEARCH}}]"

# validate SCHEMA_JSON TEXT: TEXT parses as JSON and validates (the keywords used here).
validate() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
schema, text = json.loads(sys.argv[1]), sys.argv[2]
value = json.loads(text)
def ok(v, s):
    if "enum" in s and v not in s["enum"]: return False
    t = s.get("type")
    if t is not None:
        types = t if isinstance(t, list) else [t]
        py = {"string": str, "integer": int, "boolean": bool, "object": dict, "array": list, "null": type(None)}
        if not any((isinstance(v, py[x]) and not (x == "integer" and isinstance(v, bool))) for x in types): return False
    if isinstance(v, str):
        if len(v) > s.get("maxLength", 10**9) or len(v) < s.get("minLength", 0): return False
    if isinstance(v, int) and not isinstance(v, bool) and v < s.get("minimum", -10**30): return False
    if isinstance(v, list):
        if len(v) > s.get("maxItems", 10**9): return False
        if "items" in s and not all(ok(x, s["items"]) for x in v): return False
    if isinstance(v, dict):
        if any(k not in v for k in s.get("required", [])): return False
        props = s.get("properties", {})
        if props and any(k not in props for k in v): return False
        if not all(ok(v[k], props[k]) for k in v if k in props): return False
    return True
assert ok(value, schema), (text, schema)
PY
}

# --- response_format json_schema, several seeds, with and without thinking
for seed in 1 2 3; do
  for thinking in true false; do
    expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":80,\"seed\":$seed,
      \"temperature\":1.0,\"enable_thinking\":$thinking,
      \"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"person\",\"strict\":true,\"schema\":$PERSON}}}"
    CONTENT=$(json_get 'b["choices"][0]["message"]["content"]')
    validate "$PERSON" "$CONTENT" || fail "json_schema seed $seed thinking $thinking: $CONTENT"
    [ "$(json_get 'b["choices"][0]["finish_reason"]')" = stop ] || fail "finish_reason $(json_get 'b["choices"][0]')"
  done
done

# --- json_object: any object
for seed in 4 5; do
  expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":60,\"seed\":$seed,
    \"enable_thinking\":false,\"response_format\":{\"type\":\"json_object\"}}"
  CONTENT=$(json_get 'b["choices"][0]["message"]["content"]')
  validate '{"type":"object"}' "$CONTENT" || fail "json_object: $CONTENT"
done

# --- streaming: the content deltas concatenate to valid JSON
curl -sN "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":80,\"seed\":9,\"stream\":true,
  \"enable_thinking\":false,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"p\",\"schema\":$PERSON}}}" \
  >"$E2E_TMP/stream.txt"
STREAMED=$(/usr/bin/python3 - "$E2E_TMP/stream.txt" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n\n") if l.startswith("data: ")]  # SSE comments (keep-alives) are not events
assert lines[-1] == "data: [DONE]", lines[-1]
events = [json.loads(l[6:]) for l in lines[:-1]]
print("".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"]))
PY
) || fail "stream framing"
validate "$PERSON" "$STREAMED" || fail "streamed json_schema: $STREAMED"

# --- tool_choice "required": one call to one of the tools, arguments valid for that tool
for seed in 1 2 3 4; do
  expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":80,\"seed\":$seed,
    \"tools\":$TOOLS,\"tool_choice\":\"required\"}"
  [ "$(json_get 'b["choices"][0]["finish_reason"]')" = tool_calls ] || fail "required: finish_reason $(cat "$E2E_TMP/body")"
  NAME=$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["name"]')
  ARGS=$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')
  case "$NAME" in
    get_weather) validate "$WEATHER" "$ARGS" || fail "required: get_weather arguments $ARGS" ;;
    search) validate "$SEARCH" "$ARGS" || fail "required: search arguments $ARGS" ;;
    *) fail "required: unknown tool '$NAME'" ;;
  esac
done

# --- a named function, streaming and not
for stream in false true; do
  expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":80,\"seed\":7,
    \"stream\":$stream,\"enable_thinking\":false,\"tools\":$TOOLS,
    \"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"search\"}}}"
  if [ "$stream" = false ]; then
    [ "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["name"]')" = search ] || fail "named: $(cat "$E2E_TMP/body")"
    validate "$SEARCH" "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')" || fail "named arguments"
  else
    /usr/bin/python3 - "$E2E_TMP/body" "$SEARCH" <<'PY' || fail "named, streamed: $(head -c 600 "$E2E_TMP/body")"
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n\n") if l.startswith("data: ")]  # SSE comments (keep-alives) are not events
events = [json.loads(l[6:]) for l in lines[:-1]]
calls = [c for e in events if e["choices"] for c in e["choices"][0]["delta"].get("tool_calls") or []]
assert calls and calls[0]["function"]["name"] == "search", calls
args = json.loads("".join(c["function"].get("arguments") or "" for c in calls))
assert isinstance(args.get("query"), str) and len(args["query"]) >= 1, args
finish = [e["choices"][0]["finish_reason"] for e in events if e["choices"]][-1]
assert finish == "tool_calls", finish
PY
  fi
done

# --- keywords the grammar cannot enforce are reported in a header
curl -s -D "$E2E_TMP/headers" -o "$E2E_TMP/body" "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":40,
  \"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"p\",\"schema\":{\"type\":\"string\",\"pattern\":\"^a\"}}}}"
grep -i '^x-llmesh-unenforced-schema-keywords: .*pattern' "$E2E_TMP/headers" >/dev/null || fail "no unenforced-keywords header"
json_get 'json.loads(b["choices"][0]["message"]["content"])' >/dev/null || fail "pattern schema output does not parse"

# --- errors: 400 naming the field, and the server keeps serving
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,
  \"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"p\",\"schema\":{\"type\":\"strange\"}}}}"
[ "$(json_get 'b["error"]["param"]')" = response_format ] || fail "bad schema param: $(cat "$E2E_TMP/body")"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"response_format\":{\"type\":\"xml\"}}"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"tools\":$TOOLS,
  \"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"nope\"}}}"
[ "$(json_get 'b["error"]["param"]')" = tool_choice ] || fail "unknown tool param"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"tool_choice\":\"required\"}"
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":20,\"response_format\":{\"type\":\"json_object\"}}"

# --- another family's native syntax: Llama 3.1 JSON calls ({"name": …, "parameters": …})
LLAMA_MODEL="$LLMESH_BINARY_DIR/models/tiny-llama3-q8_0.gguf"
if [ -f "$LLAMA_MODEL" ]; then
  TINY_MODEL="$LLAMA_MODEL" start_server L
  expect_status 200 POST "$L_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":80,\"seed\":3,
    \"tools\":$TOOLS,\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}}"
  [ "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["name"]')" = get_weather ] || fail "llama3 call: $(cat "$E2E_TMP/body")"
  validate "$WEATHER" "$(json_get 'b["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]')" || fail "llama3 arguments"
  expect_status 200 POST "$L_URL/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":60,\"seed\":3,
    \"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"p\",\"schema\":$PERSON}}}"
  validate "$PERSON" "$(json_get 'b["choices"][0]["message"]["content"]')" || fail "llama3 json_schema"
fi

echo "structured output OK"
