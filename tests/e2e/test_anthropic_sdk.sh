#!/usr/bin/env bash
# /v1/messages and /v1/messages/count_tokens driven by the official
# @anthropic-ai/sdk npm package (tests/e2e/anthropic_sdk_test.mjs): streaming
# and non-streaming, event order, thinking, tools, usage, errors, auth, limits.
source "$(dirname "$0")/serve_common.sh"
if [ ! -d "$NODE_MODULES/@anthropic-ai/sdk" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/@anthropic-ai/sdk missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server S --ctx-size 40960 --max-running-requests 8
start_server A --ctx-size 4096 --api-key secret --max-body-mib 0.25
LLMESH_URL=$S_URL LLMESH_AUTH_URL=$A_URL NODE_MODULES=$NODE_MODULES \
  node "$SOURCE_DIR/tests/e2e/anthropic_sdk_test.mjs" || fail "Anthropic SDK checks"
echo "PASS test_anthropic_sdk"
