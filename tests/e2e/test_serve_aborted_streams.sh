#!/usr/bin/env bash
# 1,000 streams on all four generation endpoints, each cut off at a random
# point (mid-request, before the first byte, mid-stream): no KV block, engine
# slot or HTTP worker is leaked (seen in /metrics), and the server serves on.
source "$(dirname "$0")/serve_common.sh"

start_server A --max-running-requests 16 --ctx-size 2048
/usr/bin/python3 "$SOURCE_DIR/tests/e2e/aborted_streams.py" "$A_URL" 1000 32 || fail "aborted streams"
kill -0 "$A_PID" || fail "the server died"
echo "PASS test_serve_aborted_streams"
