#!/usr/bin/env bash
# The console (/console) in a real browser: headless Debian chromium driven by playwright-core
# (tests/console/console_browser.mjs) against `llmesh serve --api-key`: the redirect, the login,
# the nodes, models, playground, requests and charts, and no console errors; then the same page
# served by `llmesh route` in front of it, with the router and the upstream as nodes.
# Screenshots land in $LLMESH_BINARY_DIR/artifacts/console/; CONSOLE_UPDATE_DOCS=1 also copies
# them to docs/console/ (the images docs/console.md shows).
source "$(dirname "$0")/route_common.sh"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  echo "SKIP: $CHROMIUM missing (apt-get install chromium, or scripts/install_deps.sh)"
  exit 77
fi
if [ ! -d "$NODE_MODULES/playwright-core" ] || ! command -v node >/dev/null; then
  echo "SKIP: node or assets/node/node_modules/playwright-core missing (run scripts/fetch_assets.sh)"
  exit 77
fi
KEY=console-test-key
start_server C --api-key "$KEY"
start_router R --upstream "$C_URL,name=box1,api_key=$KEY" --api-key route-test-key
SHOTS="$LLMESH_BINARY_DIR/artifacts/console"
rm -rf "$SHOTS"
mkdir -p "$SHOTS"
CONSOLE_URL=$C_URL CONSOLE_KEY=$KEY ROUTE_URL=$R_URL ROUTE_KEY=route-test-key NODE_MODULES=$NODE_MODULES CHROMIUM=$CHROMIUM SHOTS_DIR=$SHOTS \
  timeout 120 node "$SOURCE_DIR/tests/console/console_browser.mjs" || fail "console browser checks"
echo "screenshots: $SHOTS"
if [ "${CONSOLE_UPDATE_DOCS:-}" = 1 ]; then
  mkdir -p "$SOURCE_DIR/docs/console"
  cp "$SHOTS"/*.png "$SOURCE_DIR/docs/console/"
  echo "copied them to docs/console/"
fi
echo "PASS test_console_browser"
