#!/usr/bin/env bash
# The HTTP front end of the real server: request-head limits (431, 414),
# slow clients (408 for a trickled head or body), overflow past the workers
# (503 + Retry-After in each protocol's shape, then serving again), several
# API keys, CORS, the access log (no secrets in it), and TLS driven by the
# official openai and @anthropic-ai/sdk clients.
source "$(dirname "$0")/serve_common.sh"

printf '# team keys\nalice sk-alice-secret\n\nsk-anonymous-secret\n' >"$E2E_TMP/keys.txt"
start_server A --http-threads 4 --request-timeout 2 --api-key sk-one-secret --api-key-file "$E2E_TMP/keys.txt" \
  --access-log "$E2E_TMP/access.jsonl" --cors-origin http://app.local
PORT=${A_URL##*:}

# --- limits, slow clients and overflow, on raw sockets
/usr/bin/python3 - "$PORT" <<'PY' || fail "raw-socket checks"
import json, socket, sys, time
port = int(sys.argv[1])

def connect():
    return socket.create_connection(("127.0.0.1", port), timeout=10)

def reply(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk: break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    n = int(headers.get("content-length", 0))
    while len(body) < n:
        chunk = s.recv(65536)
        if not chunk: break
        body += chunk
    return int(lines[0].split()[1]), headers, json.loads(body) if body else None

def ask(raw):
    s = connect()
    s.sendall(raw)
    r = reply(s)
    s.close()
    return r

def openai_error(body, status):
    assert "error" in body and "message" in body["error"], (status, body)

def anthropic_error(body, status, type_):
    assert body["type"] == "error" and body["error"]["type"] == type_, (status, body)

key = b"x-api-key: sk-one-secret\r\n"
# A header line past 8,000 bytes, and 200 lines of 1 KB (past 64 KiB in all): 431.
status, _, body = ask(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + key + b"X-Big: " + b"a" * 9000 + b"\r\n\r\n")
assert status == 431, status; openai_error(body, status)
many = b"".join(b"X-H%d: %s\r\n" % (i, b"a" * 1000) for i in range(200))
status, _, body = ask(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n" + key + many + b"\r\n")
assert status == 431, status; anthropic_error(body, status, "invalid_request_error")
# Headers under the limits pass.
status, _, _ = ask(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + key + b"X-Ok: " + b"a" * 7000 + b"\r\n\r\n")
assert status == 200, status
# A 9 KB and a 40 KB URL: 414.
for n in (9000, 40000):
    status, _, body = ask(b"GET /" + b"a" * n + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 414, (n, status); openai_error(body, status)

# A head trickled a byte every 0.15 s (each read is quick, the request is not): 408 after ~2 s.
s = connect()
t0 = time.time()
try:
    for c in b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"b" * 40 + b"\r\n\r\n":
        s.send(bytes([c])); time.sleep(0.15)
except OSError:
    pass  # the server closed its side after answering
status, _, body = reply(s)
elapsed = time.time() - t0
assert status == 408 and 1.5 < elapsed < 5, (status, elapsed); openai_error(body, status)
# A body that stops halfway: 408, in Anthropic's shape on /v1/messages.
s = connect()
s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n" + key + b"Content-Length: 100\r\n\r\n{\"model\":")
status, _, body = reply(s)
assert status == 408, status; anthropic_error(body, status, "invalid_request_error")

# Overflow: 4 workers, all held by idle connections -> 503 with Retry-After at once, in each shape.
held = [connect() for _ in range(4)]
time.sleep(0.8)  # all 4 accepted and held, even on a loaded machine (they time out at 2 s)
t0 = time.time()
status, headers, body = ask(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + key + b"\r\n")
assert status == 503 and headers.get("retry-after") == "1", (status, headers); openai_error(body, status)
assert time.time() - t0 < 2, "the overflow answer waited"
status, headers, body = ask(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n" + key + b"Content-Length: 2\r\n\r\n{}")
assert status == 503, status; anthropic_error(body, status, "overloaded_error")
for h in held: h.close()
time.sleep(0.5)
status, _, _ = ask(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + key + b"\r\n")
assert status == 200, "not serving after the overflow"
print("raw-socket checks passed")
PY

U=$A_URL
H=(-H 'Content-Type: application/json')
BODY='{"messages":[{"role":"user","content":"hi"}],"max_tokens":3}'
# --- several keys: --api-key, a named and an unnamed file key; anything else 401
expect_status 401 GET "$U/v1/models"
expect_status 401 GET "$U/v1/models" -H 'x-api-key: sk-alice'
expect_status 200 GET "$U/v1/models" -H 'Authorization: Bearer sk-one-secret'
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -H 'Authorization: Bearer sk-alice-secret' -d "$BODY"
expect_status 200 GET "$U/v1/models" -H 'x-api-key: sk-anonymous-secret'
expect_status 200 GET "$U/health"

# --- CORS: an allowed origin's preflight and request; another origin gets no CORS headers
curl -s -D "$E2E_TMP/pre.h" -o /dev/null -X OPTIONS "$U/v1/messages" -H 'Origin: http://app.local' \
  -H 'Access-Control-Request-Method: POST' -H 'Access-Control-Request-Headers: content-type,x-api-key'
grep -q '^HTTP/1.1 204' "$E2E_TMP/pre.h" || fail "preflight: $(cat "$E2E_TMP/pre.h")"
grep -qi '^access-control-allow-origin: http://app.local' "$E2E_TMP/pre.h" || fail "preflight origin"
grep -qi '^access-control-allow-headers: content-type,x-api-key' "$E2E_TMP/pre.h" || fail "preflight headers"
curl -s -D "$E2E_TMP/cors.h" -o /dev/null "$U/v1/models" -H 'Origin: http://app.local' -H 'x-api-key: sk-one-secret'
grep -qi '^access-control-allow-origin: http://app.local' "$E2E_TMP/cors.h" || fail "CORS on a request"
curl -s -D "$E2E_TMP/evil.h" -o /dev/null "$U/v1/models" -H 'Origin: http://evil.example' -H 'x-api-key: sk-one-secret'
grep -qi '^access-control-allow-origin' "$E2E_TMP/evil.h" && fail "CORS headers for an origin not allowed"

# --- the access log: a JSON line per response with the key's id; never a key
expect_status 200 GET "$U/metrics" -H 'x-api-key: sk-one-secret'
grep -q '^llmesh:http_overflow_connections_total{[^}]*} [2-9]' "$E2E_TMP/body" || fail "overflow not counted"
/usr/bin/python3 - "$E2E_TMP/access.jsonl" <<'PY' || fail "access log: $(tail -5 "$E2E_TMP/access.jsonl")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 15, len(lines)
for l in lines:
    assert set(l) == {"time", "remote", "method", "path", "status", "bytes", "duration_ms", "request_id", "key_id"}, l
chat = [l for l in lines if l["path"] == "/v1/chat/completions"]
assert chat and chat[-1]["status"] == 200 and chat[-1]["key_id"] == "alice", chat
assert chat[-1]["request_id"].startswith("chatcmpl-") and chat[-1]["bytes"] > 100, chat[-1]
ids = {l["key_id"] for l in lines}
assert {"key-1", "alice", "file-4", ""} <= ids, ids
statuses = {l["status"] for l in lines}
assert {200, 401, 408, 414, 431, 503, 204} <= statuses, statuses
PY
grep -q 'secret' "$E2E_TMP/access.jsonl" "$E2E_TMP/A.log" && fail "a key appears in a log"

# --- TLS with several keys, driven by the official SDKs
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$E2E_TMP/key.pem" -out "$E2E_TMP/cert.pem" -days 1 \
  -subj "/CN=localhost" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" 2>/dev/null ||
  fail "openssl cannot make a test certificate"
E2E_CA=$E2E_TMP/cert.pem
start_server T --tls-cert "$E2E_TMP/cert.pem" --tls-key "$E2E_TMP/key.pem" --api-key sk-one-secret \
  --api-key-file "$E2E_TMP/keys.txt" --max-running-requests 8
case "$T_URL" in https://*) ;; *) fail "TLS server URL $T_URL" ;; esac
expect_status 200 GET "$T_URL/v1/models" -H 'x-api-key: sk-alice-secret'
plain=$(curl -s -o /dev/null -w '%{http_code}' "http://${T_URL#https://}/health" || true)
[ "$plain" = 000 ] || fail "plain HTTP to the TLS port got $plain"
if [ -d "$NODE_MODULES/openai" ] && [ -d "$NODE_MODULES/@anthropic-ai/sdk" ] && command -v node >/dev/null; then
  export NODE_EXTRA_CA_CERTS=$E2E_CA NODE_MODULES
  LLMESH_URL=$T_URL LLMESH_API_KEY=sk-alice-secret node "$SOURCE_DIR/tests/e2e/openai_sdk_test.mjs" >"$E2E_TMP/openai.out" 2>&1 ||
    fail "openai SDK over TLS: $(tail -20 "$E2E_TMP/openai.out")"
  LLMESH_URL=$T_URL LLMESH_API_KEY=sk-anonymous-secret node "$SOURCE_DIR/tests/e2e/anthropic_sdk_test.mjs" \
    >"$E2E_TMP/anthropic.out" 2>&1 || fail "anthropic SDK over TLS: $(tail -20 "$E2E_TMP/anthropic.out")"
else
  echo "note: node SDKs missing; TLS checked with curl only"
fi
echo "PASS test_serve_http_edge"
