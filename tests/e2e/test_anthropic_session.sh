#!/usr/bin/env bash
# A scripted Claude-Code-shaped session (tests/e2e/anthropic_session_test.mjs):
# ~20K-token system + tools, prefix reuse across turns and conversations,
# count_tokens exactness and concurrency.
source "$(dirname "$0")/serve_common.sh"
skip_on_scalar_kernels "two ~21K-token conversations within the test timeout"
if [ ! -d "$NODE_MODULES/@anthropic-ai/sdk" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/@anthropic-ai/sdk missing (run scripts/fetch_assets.sh)"
  exit 77
fi
# Two ~21K-token conversations must fit the KV pool together with their growth.
start_server S --ctx-size 40960 --kv-cache-tokens 65536
LLMESH_URL=$S_URL NODE_MODULES=$NODE_MODULES node "$SOURCE_DIR/tests/e2e/anthropic_session_test.mjs" ||
  fail "Claude-Code-shaped session checks"
echo "PASS test_anthropic_session"
