#!/usr/bin/env bash
# /v1/responses driven by the official openai npm SDK (tests/e2e/responses_sdk_test.mjs):
# streaming and not, event order, reasoning switch, forced function calls,
# json_schema / json_object text formats, malformed bodies.
source "$(dirname "$0")/serve_common.sh"
if [ ! -d "$NODE_MODULES/openai" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/openai missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server S --max-running-requests 4
LLMESH_URL=$S_URL NODE_MODULES=$NODE_MODULES node "$SOURCE_DIR/tests/e2e/responses_sdk_test.mjs" ||
  fail "responses SDK checks"
# The server survived everything above.
expect_status 200 GET "$S_URL/health"
echo "PASS test_responses_sdk"
