#!/usr/bin/env bash
# Fuzz smoke test: builds the libFuzzer targets with clang (ASan + UBSan) in
# $LLMESH_BINARY_DIR/fuzz, writes a seed corpus (make_seeds.py, plus the inputs
# of past findings in tests/fuzz/corpus_regressions/), and runs the model file
# readers for LLMESH_FUZZ_SECONDS (default 20) seconds each and the protocol /
# template / grammar / tokenizer / output-parser targets for
# LLMESH_FUZZ_SHORT_SECONDS (default 12) each, two at a time (the build needs
# both cores before that). Fails on any crash, sanitizer report, leak, timeout
# or out-of-memory (libFuzzer exits non-zero). scripts/fuzz.sh runs longer.
set -euo pipefail

src_dir=${LLMESH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin_root=${LLMESH_BINARY_DIR:-$src_dir/build}
fuzz_dir=$bin_root/fuzz
seconds=${LLMESH_FUZZ_SECONDS:-20}
short_seconds=${LLMESH_FUZZ_SHORT_SECONDS:-12}
python=/usr/bin/python3

if ! command -v clang++ > /dev/null; then
  echo "FAIL: clang++ is needed for the fuzz targets (apt-get install clang)" >&2
  exit 1
fi

echo "== building fuzz targets in $fuzz_dir"
cmake -S "$src_dir" -B "$fuzz_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLLMESH_FUZZ=ON -DLLMESH_BUILD_TESTS=OFF > "$fuzz_dir.cmake.log" 2>&1 ||
  { cat "$fuzz_dir.cmake.log"; exit 1; }
ninja -C "$fuzz_dir/build" fuzz_targets

echo "== writing seed corpus"
rm -rf "$fuzz_dir/seeds"
"$python" "$src_dir/tests/fuzz/make_seeds.py" "$fuzz_dir/seeds"

# run_fuzzer NAME SECONDS SEEDS DICT: output in $fuzz_dir/NAME.log (printed at the end, in order).
run_fuzzer() {
  local name=$1 secs=$2 seeds=$3 dict=$4
  local corpus=$fuzz_dir/corpus/$name regressions=$src_dir/tests/fuzz/corpus_regressions/${name#fuzz_}
  mkdir -p "$corpus" "$fuzz_dir/artifacts/$name"
  [ -d "$regressions" ] || regressions=
  # -timeout: one input taking over 10 s counts as a hang; -rss_limit_mb / -malloc_limit_mb: no huge allocations.
  if ! "$fuzz_dir/build/tests/fuzz/$name" "$corpus" "$seeds" $regressions -dict="$dict" -max_total_time="$secs" \
      -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$fuzz_dir/artifacts/$name/" > "$fuzz_dir/$name.log" 2>&1; then
    echo "FAIL" > "$fuzz_dir/$name.status"
  else
    echo "ok" > "$fuzz_dir/$name.status"
  fi
}

report() {
  local name=$1
  echo "== $name"
  if [ "$(cat "$fuzz_dir/$name.status")" != ok ]; then
    tail -n 60 "$fuzz_dir/$name.log"
    echo "FAIL: $name found a crash; reproducer in $fuzz_dir/artifacts/$name/" >&2
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$fuzz_dir/$name.log" || true
}

dict=$src_dir/tests/fuzz
echo "== running the file readers for ${seconds}s each, the others for ${short_seconds}s each, two at a time"
run_fuzzer fuzz_gguf "$seconds" "$fuzz_dir/seeds/gguf" "$dict/gguf.dict" &
run_fuzzer fuzz_safetensors "$seconds" "$fuzz_dir/seeds/safetensors" "$dict/json.dict"
wait
run_fuzzer fuzz_hf_config "$seconds" "$fuzz_dir/seeds/json" "$dict/json.dict" &
run_fuzzer fuzz_api_request "$short_seconds" "$fuzz_dir/seeds/api" "$dict/api.dict"
wait
run_fuzzer fuzz_jinja "$short_seconds" "$fuzz_dir/seeds/jinja" "$dict/jinja.dict" &
run_fuzzer fuzz_json_schema "$short_seconds" "$fuzz_dir/seeds/schema" "$dict/api.dict"
wait
run_fuzzer fuzz_tokenizer "$short_seconds" "$fuzz_dir/seeds/tokenizer" "$dict/output.dict" &
run_fuzzer fuzz_output_parser "$short_seconds" "$fuzz_dir/seeds/output" "$dict/output.dict"
wait

status=0
for name in fuzz_gguf fuzz_safetensors fuzz_hf_config fuzz_api_request fuzz_jinja fuzz_json_schema fuzz_tokenizer \
    fuzz_output_parser; do
  report "$name" || status=1
done
[ "$status" = 0 ] && echo "PASS: fuzz smoke"
exit "$status"
