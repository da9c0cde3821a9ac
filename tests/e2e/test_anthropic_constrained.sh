#!/usr/bin/env bash
# Forced tool calls and structured output on /v1/messages from random weights
# (tests/e2e/anthropic_constrained_test.mjs). Skips (77) until the server
# implements constrained decoding.
source "$(dirname "$0")/serve_common.sh"
if [ ! -d "$NODE_MODULES/@anthropic-ai/sdk" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/@anthropic-ai/sdk missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server S --ctx-size 40960
rc=0
LLMESH_URL=$S_URL NODE_MODULES=$NODE_MODULES node "$SOURCE_DIR/tests/e2e/anthropic_constrained_test.mjs" || rc=$?
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || fail "constrained output checks"
echo "PASS test_anthropic_constrained"
