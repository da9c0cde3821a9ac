#!/usr/bin/env bash
# A scripted Codex-shaped session on /v1/responses (tests/e2e/responses_codex_session.mjs):
# ~17K-character developer prompt, 9 tools, stateless history growing each turn;
# from turn 2 on >= 95% of the previous turn's prompt comes from the prefix cache.
source "$(dirname "$0")/serve_common.sh"
if [ ! -d "$NODE_MODULES/openai" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/openai missing (run scripts/fetch_assets.sh)"
  exit 77
fi
start_server S --max-running-requests 2 --ctx-size 16384
LLMESH_URL=$S_URL NODE_MODULES=$NODE_MODULES node "$SOURCE_DIR/tests/e2e/responses_codex_session.mjs" ||
  fail "Codex-shaped session"
echo "PASS test_responses_codex_session"
