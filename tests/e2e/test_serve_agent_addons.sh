#!/usr/bin/env bash
# The agent add-ons on the real server with the tiny model: tolerant input
# (ignored parts listed in x-llmesh-ignored-request-parts, content the model
# must see refused with a 400 in the protocol's shape), reasoning control (a
# thinking budget closes the block and the answer follows; bad effort values
# are 400s naming the field) and the repetition-loop guard (greedy decoding
# on the tiny model loops: the guard ends it, /metrics counts it).
source "$(dirname "$0")/serve_common.sh"

start_server S
U=$S_URL
H=(-H 'Content-Type: application/json')
HEADERS="$E2E_TMP/headers"

# ignored_header: the x-llmesh-ignored-request-parts value of the last response with -D "$HEADERS"
ignored_header() { sed -n 's/^x-llmesh-ignored-request-parts: *//Ip' "$HEADERS" | tr -d '\r'; }

# --- tolerant input: a Codex request with an additional_tools item, hosted tools and client_metadata
expect_status 200 POST "$U/v1/responses" "${H[@]}" -D "$HEADERS" -d '{
  "model": "tiny", "max_output_tokens": 4, "ignore_eos": true, "client_metadata": {"session": "s"},
  "input": [{"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Be terse."}]},
            {"type": "additional_tools", "tools": [{"type": "function", "name": "late_tool"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
  "tools": [{"type": "function", "name": "exec", "parameters": {"type": "object"}}, {"type": "web_search"}]}'
[ "$(json_get 'b["output"][0]["type"]')" = message ] || fail "responses with additional_tools: $(cat "$E2E_TMP/body")"
ignored_header | grep -F "input item type 'additional_tools'" >/dev/null || fail "header lacks additional_tools: $(ignored_header)"
ignored_header | grep -F "tool type 'web_search'" >/dev/null || fail "header lacks web_search: $(ignored_header)"
ignored_header | grep -F "field 'client_metadata'" >/dev/null || fail "header lacks client_metadata: $(ignored_header)"
# logged once per kind per process: a second identical request adds no log line
expect_status 200 POST "$U/v1/responses" "${H[@]}" -d '{"max_output_tokens": 2, "ignore_eos": true,
  "input": [{"type": "additional_tools", "tools": []}, {"role": "user", "content": "hi"}]}'
[ "$(grep -c "ignoring input item type 'additional_tools'" "$E2E_TMP/S.log")" = 1 ] || fail "additional_tools not logged exactly once"

# an image in Responses: 400 naming the part, OpenAI shape
expect_status 400 POST "$U/v1/responses" "${H[@]}" -d '{"input": [{"role": "user", "content": [
  {"type": "input_text", "text": "what is this?"}, {"type": "input_image", "image_url": "data:image/png;base64,AA"}]}]}'
[ "$(json_get 'b["error"]["param"]')" = "input[0].content[1].type" ] || fail "input_image param: $(cat "$E2E_TMP/body")"

# chat: unknown message keys and non-function tools are ignored; an unknown content part is a 400
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -D "$HEADERS" -d '{"max_tokens": 2, "ignore_eos": true,
  "messages": [{"role": "user", "content": "hi", "cache_control": {"type": "ephemeral"}}],
  "tools": [{"type": "custom", "custom": {"name": "grammar_tool"}}]}'
ignored_header | grep -F "message field 'cache_control'" >/dev/null || fail "chat header: $(ignored_header)"
ignored_header | grep -F "tool type 'custom'" >/dev/null || fail "chat header: $(ignored_header)"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d '{"messages": [{"role": "user", "content": [
  {"type": "text", "text": "listen"}, {"type": "input_audio", "input_audio": {"data": "AA", "format": "wav"}}]}]}'
[ "$(json_get 'b["error"]["param"]')" = "messages[0].content[1].type" ] || fail "input_audio param: $(cat "$E2E_TMP/body")"
json_get 'b["error"]["message"]' | grep input_audio >/dev/null || fail "input_audio message"

# Anthropic: server-tool records are skipped and listed; an unknown block type is a 400 in Anthropic's shape
expect_status 200 POST "$U/v1/messages" "${H[@]}" -D "$HEADERS" -d '{"model": "claude-x", "max_tokens": 2,
  "context_management": {"edits": []}, "messages": [
  {"role": "user", "content": "search"},
  {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
    {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}, {"type": "text", "text": "done"}]},
  {"role": "user", "content": "thanks"}]}'
[ "$(json_get 'b["type"]')" = message ] || fail "messages with server tool records: $(cat "$E2E_TMP/body")"
ignored_header | grep -F "content block type 'web_search_tool_result'" >/dev/null || fail "anthropic header: $(ignored_header)"
ignored_header | grep -F "field 'context_management'" >/dev/null || fail "anthropic header: $(ignored_header)"
expect_status 400 POST "$U/v1/messages" "${H[@]}" -d '{"max_tokens": 2, "messages": [{"role": "user", "content": [
  {"type": "text", "text": "x"}, {"type": "hologram", "data": "..."}]}]}'
[ "$(json_get 'b["type"]')" = error ] || fail "anthropic error shape: $(cat "$E2E_TMP/body")"
json_get 'b["error"]["message"]' | grep -F "messages.0.content.1.type" | grep hologram >/dev/null || fail "hologram message"

# --- reasoning control. The prompt opens <think> (an assistant prefill): the budget closes it.
think_body() {  # budget -> an Anthropic body starting in reasoning, greedy, 40 tokens
  echo "{\"max_tokens\": 40, \"temperature\": 0, \"loop_guard\": false, $1,
         \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}, {\"role\": \"assistant\", \"content\": \"<think>\\n\"}]}"
}
thinking_of() { json_get '"".join(c.get("thinking", "") for c in b["content"])'; }
text_of() { json_get '"".join(c.get("text", "") for c in b["content"])'; }
expect_status 200 POST "$U/v1/messages" "${H[@]}" -d "$(think_body '"thinking": {"type": "enabled", "budget_tokens": 5}')"
T5=$(thinking_of); A5=$(text_of)
[ "$(json_get '[c["type"] for c in b["content"]]')" = "['thinking', 'text']" ] || fail "budget 5: blocks $(cat "$E2E_TMP/body")"
[ -n "$A5" ] || fail "no answer after the budget closed the reasoning"
[ "$(json_get 'b["usage"]["output_tokens"]')" = 40 ] || fail "output_tokens $(json_get 'b["usage"]')"
expect_status 200 POST "$U/tokenize" "${H[@]}" -d "$(/usr/bin/python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1], "add_special_tokens": False}))' "$T5")"
[ "$(json_get 'b["count"]')" = 5 ] || fail "the reasoning block holds $(json_get 'b["count"]') tokens, not the budget of 5"
expect_status 200 POST "$U/v1/messages" "${H[@]}" -d "$(think_body '"thinking": {"type": "enabled", "budget_tokens": 12}')"
T12=$(thinking_of)
[ "${T12#"$T5"}" != "$T12" ] && [ "${#T12}" -gt "${#T5}" ] || fail "budget 12 reasoning '$T12' does not extend budget 5's '$T5'"
# effort "xhigh": no budget, the reasoning runs to max_tokens with no answer
expect_status 200 POST "$U/v1/messages" "${H[@]}" \
  -d "$(think_body '"thinking": {"type": "adaptive"}, "output_config": {"effort": "xhigh"}')"
[ "$(json_get '[c["type"] for c in b["content"]]')" = "['thinking']" ] || fail "xhigh: $(cat "$E2E_TMP/body")"
[ "$(json_get 'b["stop_reason"]')" = max_tokens ] || fail "xhigh stop_reason"
# streaming: the same budget gives thinking deltas, a closed thinking block, then text deltas
curl -sN "$U/v1/messages" "${H[@]}" -d "$(think_body '"stream": true, "thinking": {"type": "enabled", "budget_tokens": 5}')" \
  >"$E2E_TMP/think_stream.txt"
/usr/bin/python3 - "$E2E_TMP/think_stream.txt" "$T5" <<'PY' || fail "streamed budget"
import json, sys
events = [json.loads(l[6:]) for l in open(sys.argv[1]).read().splitlines() if l.startswith("data: ")]
starts = [e["content_block"]["type"] for e in events if e["type"] == "content_block_start"]
assert starts == ["thinking", "text"], starts
thinking = "".join(e["delta"].get("thinking", "") for e in events if e["type"] == "content_block_delta")
assert thinking == sys.argv[2], (thinking, sys.argv[2])
PY
# off / none: no reasoning (the template closes an empty block), in every API
expect_status 200 POST "$U/apply-template" "${H[@]}" -d '{"messages": [{"role": "user", "content": "x"}], "reasoning_effort": "off"}'
[ "$(json_get 'b["prompt"].endswith("<think>\n\n</think>\n\n")')" = True ] || fail "reasoning_effort off not rendered"
expect_status 200 POST "$U/apply-template" "${H[@]}" -d '{"messages": [{"role": "user", "content": "x"}], "reasoning_effort": "low"}'
[ "$(json_get 'b["prompt"].endswith("<|im_start|>assistant\n")')" = True ] || fail "reasoning_effort low not rendered as thinking on"
# invalid values: 400 naming the parameter, in each protocol's shape
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d '{"messages": [{"role": "user", "content": "x"}], "reasoning_effort": "turbo"}'
[ "$(json_get 'b["error"]["param"]')" = reasoning_effort ] || fail "reasoning_effort param"
expect_status 400 POST "$U/v1/responses" "${H[@]}" -d '{"input": "x", "reasoning": {"effort": "turbo"}}'
[ "$(json_get 'b["error"]["param"]')" = reasoning.effort ] || fail "reasoning.effort param"
expect_status 400 POST "$U/v1/messages" "${H[@]}" -d '{"max_tokens": 4, "messages": [{"role": "user", "content": "x"}],
  "thinking": {"type": "adaptive"}, "output_config": {"effort": "turbo"}}'
json_get 'b["error"]["message"]' | grep -F "output_config.effort" | grep turbo >/dev/null || fail "output_config.effort message"

# --- loop guard: greedy on the tiny model repeats one token; the default guard (256 tokens) stops it
stops_metric() { curl -s "$U/metrics" | sed -n 's/^llmesh:loop_guard_stops_total{[^}]*} //p'; }
[ "$(stops_metric)" = 0 ] || fail "loop guard counter not 0 at start: $(stops_metric)"
LOOP='"messages": [{"role": "user", "content": "Hello"}], "temperature": 0, "max_tokens": 400'
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{$LOOP}"
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = stop ] || fail "loop guard: finish_reason $(json_get 'b["choices"][0]["finish_reason"]')"
[ "$(json_get 'b["usage"]["completion_tokens"]')" -lt 400 ] || fail "loop guard did not stop early"
[ "$(stops_metric)" = 1 ] || fail "loop guard counter $(stops_metric)"
grep "the loop guard ended the generation" "$E2E_TMP/S.log" >/dev/null || fail "no loop guard log line"
# per request: off, or tighter thresholds
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{$LOOP, \"loop_guard\": false}"
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = length ] || fail "loop_guard false still stopped"
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{$LOOP, \"loop_guard\": {\"tokens\": 24, \"max_period\": 4}}"
[ "$(json_get 'b["usage"]["completion_tokens"]')" -le 40 ] || fail "loop_guard tokens 24 stopped after $(json_get 'b["usage"]')"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{$LOOP, \"loop_guard\": {\"tokens\": 1}}"
[ "$(json_get 'b["error"]["param"]')" = loop_guard.tokens ] || fail "loop_guard.tokens param"
# Anthropic ends with end_turn; /v1/completions leaves the guard off unless asked
expect_status 200 POST "$U/v1/messages" "${H[@]}" -d "{$LOOP}"
[ "$(json_get 'b["stop_reason"]')" = end_turn ] || fail "anthropic loop guard stop_reason $(json_get 'b["stop_reason"]')"
expect_status 200 POST "$U/v1/completions" "${H[@]}" -d '{"prompt": "Hello", "temperature": 0, "max_tokens": 600}'
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = length ] || fail "completions: guard on by default"
expect_status 200 POST "$U/v1/completions" "${H[@]}" -d '{"prompt": "Hello", "temperature": 0, "max_tokens": 600, "loop_guard": true}'
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = stop ] || fail "completions: loop_guard true did not stop"
[ "$(stops_metric)" = 4 ] || fail "loop guard counter $(stops_metric), want 4"

# a server started with --loop-guard-tokens 0 has the guard off by default
start_server OFF --loop-guard-tokens 0
expect_status 200 POST "$OFF_URL/v1/chat/completions" "${H[@]}" -d "{$LOOP}"
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = length ] || fail "--loop-guard-tokens 0 still guards"

echo "OK"
