#!/usr/bin/env bash
# `llmesh serve` driven by curl: endpoints, SSE framing, exact usage, and every
# error case (each followed by a request that must still succeed).
source "$(dirname "$0")/serve_common.sh"

start_server S --max-body-mib 1
U=$S_URL
H=(-H 'Content-Type: application/json')

# --- /v1/models, /health
expect_status 200 GET "$U/v1/models"
[ "$(json_get 'b["data"][0]["id"]')" = tiny ] || fail "/v1/models id"

# --- non-streaming chat with exact usage: prompt tokens = /tokenize of the same messages
MSG='[{"role":"system","content":"You are terse."},{"role":"user","content":"Count to five."}]'
expect_status 200 POST "$U/tokenize" "${H[@]}" -d "{\"messages\":$MSG}"
PROMPT_TOKENS=$(json_get 'b["count"]')
[ "$PROMPT_TOKENS" -gt 5 ] || fail "tokenize count $PROMPT_TOKENS"
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" \
  -d "{\"model\":\"tiny\",\"messages\":$MSG,\"max_tokens\":9,\"temperature\":0,\"ignore_eos\":true}"
[ "$(json_get 'b["object"]')" = chat.completion ] || fail "object"
[ "$(json_get 'b["usage"]["prompt_tokens"]')" = "$PROMPT_TOKENS" ] || fail "prompt_tokens $(json_get 'b["usage"]') vs $PROMPT_TOKENS"
[ "$(json_get 'b["usage"]["completion_tokens"]')" = 9 ] || fail "completion_tokens $(json_get 'b["usage"]')"
[ "$(json_get 'b["usage"]["total_tokens"]')" = $((PROMPT_TOKENS + 9)) ] || fail "total_tokens"
[ "$(json_get 'b["choices"][0]["finish_reason"]')" = length ] || fail "finish_reason"
[ "$(json_get '"cached_tokens" in b["usage"]["prompt_tokens_details"]')" = True ] || fail "cached_tokens missing"
NONSTREAM_TEXT=$(json_get 'b["choices"][0]["message"]["content"]')

# /apply-template renders the same prompt; /tokenize of its text (no extra BOS) gives the same count
expect_status 200 POST "$U/apply-template" "${H[@]}" -d "{\"messages\":$MSG}"
json_get 'b["prompt"]' | grep "Count to five." >/dev/null || fail "apply-template"
json_get 'b["prompt"]' | grep "<|im_start|>assistant" >/dev/null || fail "apply-template lacks the generation prompt"

# enable_thinking (top level or in chat_template_kwargs) reaches the Qwen3 template: an empty think block
for body in "{\"messages\":$MSG,\"enable_thinking\":false}" "{\"messages\":$MSG,\"chat_template_kwargs\":{\"enable_thinking\":false}}"; do
  expect_status 200 POST "$U/apply-template" "${H[@]}" -d "$body"
  [ "$(json_get 'b["prompt"].endswith("<think>\n\n</think>\n\n")')" = True ] || fail "enable_thinking=false not rendered: $(cat "$E2E_TMP/body")"
done
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" \
  -d "{\"messages\":$MSG,\"max_tokens\":4,\"ignore_eos\":true,\"enable_thinking\":false}"
[ "$(json_get '"reasoning_content" in b["choices"][0]["message"]')" = False ] || fail "reasoning_content after a closed think block"

# --- streaming chat: role first, finish_reason last, usage chunk, [DONE]; same text as non-streaming
curl -sN "$U/v1/chat/completions" "${H[@]}" \
  -d "{\"model\":\"tiny\",\"messages\":$MSG,\"max_tokens\":9,\"temperature\":0,\"ignore_eos\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}" \
  >"$E2E_TMP/stream.txt"
/usr/bin/python3 - "$E2E_TMP/stream.txt" "$PROMPT_TOKENS" "$NONSTREAM_TEXT" <<'PY' || fail "SSE stream checks"
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n\n") if l.strip()]
assert all(l.startswith("data: ") for l in lines), lines
assert lines[-1] == "data: [DONE]", lines[-1]
events = [json.loads(l[6:]) for l in lines[:-1]]
assert events[0]["choices"][0]["delta"]["role"] == "assistant", events[0]
finishes = [e["choices"][0]["finish_reason"] for e in events if e["choices"]]
assert finishes[-1] == "length" and all(f is None for f in finishes[:-1]), finishes
usage = events[-1]
assert usage["choices"] == [] and usage["usage"]["completion_tokens"] == 9, usage
assert usage["usage"]["prompt_tokens"] == int(sys.argv[2]), usage
text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
assert text == sys.argv[3], (text, sys.argv[3])
assert all(e["object"] == "chat.completion.chunk" for e in events)
PY

# --- /v1/completions, /detokenize round trip
expect_status 200 POST "$U/v1/completions" "${H[@]}" -d '{"model":"tiny","prompt":"Once upon a time","max_tokens":5,"temperature":0,"ignore_eos":true}'
[ "$(json_get 'b["object"]')" = text_completion ] || fail "completions object"
[ "$(json_get 'b["usage"]["completion_tokens"]')" = 5 ] || fail "completions usage"
expect_status 200 POST "$U/tokenize" "${H[@]}" -d '{"prompt":"Hello wörld 🚀","add_special_tokens":false}'
IDS=$(json_get 'json.dumps(b["tokens"])')
expect_status 200 POST "$U/detokenize" "${H[@]}" -d "{\"tokens\":$IDS}"
[ "$(json_get 'b["prompt"]')" = "Hello wörld 🚀" ] || fail "detokenize round trip"

# --- errors, each in OpenAI's shape, the server serving on after each
check_error() {  # STATUS PARAM(or -) MESSAGE_GREP
  [ "$(json_get 'sorted(b["error"].keys())')" = "['code', 'message', 'param', 'type']" ] || fail "error shape: $(cat "$E2E_TMP/body")"
  if [ "$2" != - ]; then [ "$(json_get 'b["error"]["param"]')" = "$2" ] || fail "param: $(cat "$E2E_TMP/body")"; fi
  json_get 'b["error"]["message"]' | grep -- "$3" >/dev/null || fail "message lacks '$3': $(cat "$E2E_TMP/body")"
}
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d '{"model": "tiny", "messages": [}'
check_error 400 - "not valid JSON"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"temperature\":\"hot\"}"
check_error 400 temperature "temperature"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d '{"messages":[{"role":"user"}]}'
check_error 400 "messages[0].content" "content"
expect_status 400 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":100000}"
check_error 400 max_tokens "100000"
json_get 'b["error"]["message"]' | grep "$PROMPT_TOKENS" >/dev/null || fail "context error lacks the prompt length"
expect_status 404 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"model\":\"gpt-9\",\"messages\":$MSG}"
check_error 404 model "gpt-9"
expect_status 404 GET "$U/v1/nothing"
check_error 404 - "No route"
head -c $((2 * 1024 * 1024)) /dev/zero | tr '\0' 'a' | sed 's/^/{"prompt":"/; s/$/"}/' >"$E2E_TMP/big.json"
expect_status 413 POST "$U/v1/completions" "${H[@]}" --data-binary "@$E2E_TMP/big.json"
check_error 413 - "larger than"
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -d "{\"messages\":$MSG,\"max_tokens\":2}"

# --- stop string on the non-streaming path: output cut before it, finish_reason stop
STOP=$(/usr/bin/python3 -c "import sys; t=sys.argv[1]; print(t[3:6] if len(t) >= 6 else '')" "$NONSTREAM_TEXT")
if [ -n "$STOP" ]; then
  /usr/bin/python3 -c "import json,sys; print(json.dumps({'messages': json.loads(sys.argv[1]), 'max_tokens': 9, 'temperature': 0, 'ignore_eos': True, 'stop': [sys.argv[2]]}))" "$MSG" "$STOP" >"$E2E_TMP/stop.json"
  expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" --data-binary "@$E2E_TMP/stop.json"
  /usr/bin/python3 -c "
import json,sys
b=json.load(open('$E2E_TMP/body')); full=sys.argv[1]; stop=sys.argv[2]
c=b['choices'][0]
assert c['finish_reason']=='stop', c
assert c['message']['content']==full[:full.index(stop)], (c, full, stop)
" "$NONSTREAM_TEXT" "$STOP" || fail "stop string"
fi

# --- /metrics and /flush_cache
expect_status 200 GET "$U/metrics"
for name in llmesh:num_requests_running llmesh:num_requests_waiting llmesh:kv_cache_blocks_used llmesh:kv_cache_blocks_total \
  llmesh:prefix_cache_queries_total llmesh:prefix_cache_hits_total llmesh:prompt_tokens_total llmesh:generation_tokens_total \
  llmesh:time_to_first_token_seconds_bucket llmesh:time_per_output_token_seconds_bucket llmesh:e2e_request_latency_seconds_count; do
  grep -q "^$name{" "$E2E_TMP/body" || fail "/metrics lacks $name"
done
grep -q '^llmesh:generation_tokens_total{model_name="tiny"} [1-9]' "$E2E_TMP/body" || fail "generation tokens not counted"
expect_status 200 POST "$U/flush_cache" -d ""
[ "$(json_get 'b["status"]')" = ok ] || fail "flush_cache"
echo "PASS test_serve_curl"
