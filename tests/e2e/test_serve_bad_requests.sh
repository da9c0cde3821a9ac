#!/usr/bin/env bash
# The bad-request catalog (tests/e2e/bad_requests.py): 80 malformed, mistyped,
# oversized and unauthorized requests across the five generation endpoints,
# each answered with its status in the protocol's own error shape; the server
# serves normally afterwards and has not crashed.
source "$(dirname "$0")/serve_common.sh"

start_server A --api-key sk-catalog --max-body-mib 1 --ctx-size 512
/usr/bin/python3 "$SOURCE_DIR/tests/e2e/bad_requests.py" "$A_URL" sk-catalog 512 || fail "bad-request catalog"
kill -0 "$A_PID" || fail "the server died"
echo "PASS test_serve_bad_requests"
