#!/usr/bin/env bash
# The official clients work through `llmesh route` unchanged: the whole
# @anthropic-ai/sdk suite (tests/e2e/anthropic_sdk_test.mjs: streaming event
# order, thinking, tools, count_tokens == usage, prefix-cache hits on a repeated
# prompt, errors, auth, body limits) runs against a router in front of three
# upstreams, and the openai SDK drives chat, completions, Responses and models
# (tests/e2e/route_openai_sdk_test.mjs).
source "$(dirname "$0")/route_common.sh"
if [ ! -d "$NODE_MODULES/@anthropic-ai/sdk" ] || [ ! -d "$NODE_MODULES/openai" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or the SDKs in assets/node/node_modules missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server S1 --ctx-size 40960 --max-running-requests 8
start_server S2 --ctx-size 40960 --max-running-requests 8
start_server S3 --ctx-size 40960 --max-running-requests 8
start_server A --ctx-size 4096 --api-key secret --max-body-mib 0.25
start_router R --upstream "$S1_URL,name=s1" --upstream "$S2_URL,name=s2" --upstream "$S3_URL,name=s3"
# The router checks the key and passes it on to an upstream that wants the same one.
start_router RA --upstream "$A_URL,name=a" --api-key secret

LLMESH_URL=$R_URL LLMESH_AUTH_URL=$RA_URL NODE_MODULES=$NODE_MODULES \
  node "$SOURCE_DIR/tests/e2e/anthropic_sdk_test.mjs" || fail "Anthropic SDK checks through the router"
LLMESH_URL=$R_URL NODE_MODULES=$NODE_MODULES \
  node "$SOURCE_DIR/tests/e2e/route_openai_sdk_test.mjs" || fail "openai SDK checks through the router"
expect_status 200 GET "$R_URL/v1/route"
[ "$(json_get 'sum(u["requests"] for u in b["upstreams"]) > 20')" = True ] || fail "requests not counted: $(cat "$E2E_TMP/body")"
echo "PASS test_route_sdk"
