# Sourced by tests/e2e/test_serve_*.sh: starts `llmesh serve` on a free
# loopback port with the tiny Qwen3 model and kills it when the script exits.
#   start_server NAME [serve flags...]   -> sets ${NAME}_URL and ${NAME}_PID; waits for /health 200
# Set E2E_CA to a CA certificate file for servers started with --tls-cert: curl trusts it.
set -euo pipefail

: "${LLMESH:?path of the llmesh binary}"
: "${LLMESH_BINARY_DIR:?build dir (models in \$LLMESH_BINARY_DIR/models)}"
SOURCE_DIR="${LLMESH_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
TINY_MODEL="${TINY_MODEL:-$LLMESH_BINARY_DIR/models/tiny-qwen3-q8_0.gguf}"
NODE_MODULES="$SOURCE_DIR/assets/node/node_modules"
E2E_TMP=$(mktemp -d)
SERVER_PIDS=()

cleanup() {
  for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${SERVER_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$E2E_TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # run the EXIT trap on a ctest timeout too

fail() {
  echo "FAIL: $*" >&2
  for log in "$E2E_TMP"/*.log; do [ -f "$log" ] && { echo "--- $log" >&2; tail -20 "$log" >&2; }; done
  exit 1
}

if [ ! -f "$TINY_MODEL" ]; then
  echo "SKIP: $TINY_MODEL missing (the generate_models fixture makes it)"
  exit 0
fi

# skip_on_scalar_kernels WHY: exit 77 (skip) when the CPU runs the scalar
# reference kernels (no AVX2 here, or LLMESH_KERNELS=ref): a ~22K-token prefill then takes minutes,
# past the time budget the test exists to check. `llmesh inspect` says which kernels run.
skip_on_scalar_kernels() {
  local kernels
  kernels=$("$LLMESH" inspect --model "$TINY_MODEL" --json | sed -n 's/.*"cpu_kernels": "\([a-z0-9]*\)".*/\1/p')
  if [ "$kernels" = ref ]; then
    echo "SKIP: $1 needs the fast CPU kernels (avx2 or avx512); this CPU runs the scalar reference"
    exit 77
  fi
}

E2E_CURL_TLS=()
start_server() {
  [ -n "${E2E_CA:-}" ] && E2E_CURL_TLS=(--cacert "$E2E_CA")
  local name=$1
  shift
  local log="$E2E_TMP/$name.log"
  : >"$log"  # exists before the background job opens it: the sed below must not race it
  # SERVE_LAUNCH: a launcher in front of the binary (the multi-rank tests: "mpirun -np 4").
  ${SERVE_LAUNCH:-} "$LLMESH" serve --model "$TINY_MODEL" --host 127.0.0.1 --port 0 --served-model-name tiny \
    --threads 1 "$@" >"$log" 2>&1 &
  local pid=$!
  SERVER_PIDS+=("$pid")
  local url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's/.*ready at \(https\?:[^ ]*\).*/\1/p' "$log" | head -1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || fail "server $name exited during startup"
    sleep 0.1
  done
  [ -n "$url" ] || fail "server $name not ready after 30 s"
  [ "$(curl -s "${E2E_CURL_TLS[@]}" -o /dev/null -w '%{http_code}' "$url/health")" = 200 ] ||
    fail "$name: /health is not 200"
  printf -v "${name}_URL" '%s' "$url"
  printf -v "${name}_PID" '%s' "$pid"
}

# expect_status CODE METHOD URL [curl args...]: the body lands in $E2E_TMP/body
expect_status() {
  local want=$1 method=$2 url=$3
  shift 3
  local got
  got=$(curl -s "${E2E_CURL_TLS[@]}" -o "$E2E_TMP/body" -w '%{http_code}' -X "$method" "$url" "$@") || true
  [ "$got" = "$want" ] || fail "$method $url: status $got, want $want; body: $(head -c 400 "$E2E_TMP/body")"
}

# json_get EXPR: evaluates a Python expression over the JSON in $E2E_TMP/body (bound to `b`).
json_get() {
  /usr/bin/python3 -c "import json,sys; b=json.load(open('$E2E_TMP/body')); print($1)"
}
