#!/usr/bin/env bash
# `llmesh serve` driven by the official openai npm SDK (tests/e2e/openai_sdk_test.mjs).
source "$(dirname "$0")/serve_common.sh"
if [ ! -d "$NODE_MODULES/openai" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/openai missing (run scripts/fetch_assets.sh)"
  exit 0
fi
start_server S --max-running-requests 8
LLMESH_URL=$S_URL NODE_MODULES=$NODE_MODULES node "$SOURCE_DIR/tests/e2e/openai_sdk_test.mjs" || fail "openai SDK checks"
echo "PASS test_serve_openai_sdk"
