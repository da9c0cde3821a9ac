# Sourced by tests/bench/test_bench_*.sh: the e2e server helpers plus
#   run_bench OUT [bench run flags...]   -> runs `llmesh bench run` against $S_URL with the tiny model's tokenizer
#   py EXPR_FILE...                      -> /usr/bin/python3 with the results checks below
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/serve_common.sh"

run_bench() {
  local out=$1
  shift
  "$LLMESH" bench run --url "$S_URL" --model-path "$TINY_MODEL" --out "$out" "$@"
}

# check_py OUT 'python statements' : runs them with `d` = the results folder and
# helpers: summary() -> list of analyzed points, records() -> request lines, manifest().
check_py() {
  local out=$1 code=$2
  /usr/bin/python3 - "$out" <<PYEOF || fail "results check failed in $out (the traceback above says which)"
import csv, json, sys
d = sys.argv[1]
def summary(): return [json.loads(l) for l in open(d + "/summary.jsonl")]
def records(): return [json.loads(l) for l in open(d + "/requests.jsonl") if '"type":"request"' in l]
def manifest(): return json.load(open(d + "/run_manifest.json"))
def by_kind(k): return [p for p in summary() if p["kind"] == k]
$code
PYEOF
}
