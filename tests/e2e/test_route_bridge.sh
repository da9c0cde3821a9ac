#!/usr/bin/env bash
# Anthropic Messages bridged onto OpenAI chat completions: `llmesh route` in
# front of an upstream declared kind=openai (a `llmesh serve` reached only
# through /v1/chat/completions) runs the whole @anthropic-ai/sdk suite
# (tests/e2e/anthropic_sdk_test.mjs with LLMESH_BRIDGED=1): event order,
# thinking first with signatures, tools both ways, system kept in place,
# max_tokens fitted to the context, "prompt is too long" for Claude Code, and
# count_tokens (rendered by the router with --model) equal to the usage of the
# same request. Without --model and without an llmesh upstream, count_tokens is
# a 404 (Claude Code then counts with max_tokens-1 requests). When
# ../shared/peers/llama.cpp is present, the same bridge runs against llama-server.
source "$(dirname "$0")/route_common.sh"
if [ ! -d "$NODE_MODULES/@anthropic-ai/sdk" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/@anthropic-ai/sdk missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server O --ctx-size 40960 --max-running-requests 8
start_server OA --ctx-size 4096 --api-key secret --max-body-mib 0.25
start_router R --upstream "$O_URL,name=o,kind=openai,models=tiny" --model "$TINY_MODEL"
start_router RA --upstream "$OA_URL,name=oa,kind=openai,models=tiny" --model "$TINY_MODEL" --api-key secret

LLMESH_BRIDGED=1 LLMESH_URL=$R_URL LLMESH_AUTH_URL=$RA_URL NODE_MODULES=$NODE_MODULES \
  node "$SOURCE_DIR/tests/e2e/anthropic_sdk_test.mjs" || fail "Anthropic SDK checks over the bridge"

# The upstream saw chat completions only; the answers say they were bridged.
curl -s -D "$E2E_TMP/headers" -o "$E2E_TMP/body" "$R_URL/v1/messages" -H 'Content-Type: application/json' \
  -d '{"model":"claude-x","max_tokens":4,"system":[{"type":"text","text":"x-anthropic-billing-header: cc=1;"},{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":"hi"},{"role":"system","content":"Reminder: be kind."},{"role":"user","content":"again"}]}'
grep -qi '^x-llmesh-bridge: anthropic-messages-to-openai-chat' "$E2E_TMP/headers" || fail "no bridge header: $(cat "$E2E_TMP/headers")"
[ "$(json_get 'b["model"]')" = claude-x ] || fail "model not echoed: $(cat "$E2E_TMP/body")"
curl -s "$O_URL/metrics" > "$E2E_TMP/upstream_metrics.txt"

# count_tokens without --model and without an llmesh upstream: 404 in Anthropic's shape.
start_router N --upstream "$O_URL,name=o,kind=openai,models=tiny"
expect_status 404 POST "$N_URL/v1/messages/count_tokens" -H 'Content-Type: application/json' \
  -d '{"model":"tiny","messages":[{"role":"user","content":"hi"}]}'
[ "$(json_get 'b["error"]["type"]')" = not_found_error ] || fail "count_tokens 404 shape: $(cat "$E2E_TMP/body")"

LLAMA_SERVER="${LLAMA_SERVER:-$SOURCE_DIR/../shared/peers/llama.cpp/bin/llama-server}"
if [ -x "$LLAMA_SERVER" ]; then
  port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$LLAMA_SERVER" -m "$TINY_MODEL" --host 127.0.0.1 --port "$port" -t 1 -c 8192 --jinja >"$E2E_TMP/llama.log" 2>&1 &
  llama_pid=$!
  SERVER_PIDS+=("$llama_pid")
  llama_up=""
  for _ in $(seq 1 100); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] && { llama_up=1; break; }
    kill -0 "$llama_pid" 2>/dev/null || break
    sleep 0.2
  done
  if [ -n "$llama_up" ]; then
    start_router L --upstream "http://127.0.0.1:$port,name=llama,kind=openai" --model "$TINY_MODEL"
    LLMESH_URL=$L_URL NODE_MODULES=$NODE_MODULES node "$SOURCE_DIR/tests/e2e/route_bridge_llama_test.mjs" \
      || fail "bridge onto llama-server"
  else
    echo "llama-server did not start ($(tail -1 "$E2E_TMP/llama.log")): its part is skipped"
  fi
else
  echo "llama-server not found at $LLAMA_SERVER: its part is skipped"
fi
echo "PASS test_route_bridge"
