#!/usr/bin/env bash
# Fuzz smoke test for the model file readers: builds the libFuzzer targets with
# clang (ASan + UBSan) in $LLMESH_BINARY_DIR/fuzz, writes a seed corpus of small
# valid files, and runs each target for LLMESH_FUZZ_SECONDS (default 20) seconds.
# Fails on any crash, sanitizer report, leak or timeout (libFuzzer exits non-zero).
set -euo pipefail

src_dir=${LLMESH_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bin_root=${LLMESH_BINARY_DIR:-$src_dir/build}
fuzz_dir=$bin_root/fuzz
seconds=${LLMESH_FUZZ_SECONDS:-20}
python=/usr/bin/python3

if ! command -v clang++ > /dev/null; then
  echo "FAIL: clang++ is needed for the fuzz targets (apt-get install clang)" >&2
  exit 1
fi

echo "== building fuzz targets in $fuzz_dir"
cmake -S "$src_dir" -B "$fuzz_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLLMESH_FUZZ=ON -DLLMESH_BUILD_TESTS=OFF > "$fuzz_dir.cmake.log" 2>&1 ||
  { cat "$fuzz_dir.cmake.log"; exit 1; }
ninja -C "$fuzz_dir/build" fuzz_gguf fuzz_safetensors fuzz_hf_config

echo "== writing seed corpus"
rm -rf "$fuzz_dir/seeds"
"$python" "$src_dir/tests/fuzz/make_seeds.py" "$fuzz_dir/seeds"

run_fuzzer() {
  local name=$1 seeds=$2 dict=$3
  local corpus=$fuzz_dir/corpus/$name
  mkdir -p "$corpus" "$fuzz_dir/artifacts/$name"
  echo "== $name for ${seconds}s"
  # -timeout: one input taking over 10 s counts as a hang; -rss_limit_mb: no huge allocations.
  if ! "$fuzz_dir/build/tests/fuzz/$name" "$corpus" "$seeds" -dict="$dict" -max_total_time="$seconds" \
      -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$fuzz_dir/artifacts/$name/" > "$fuzz_dir/$name.log" 2>&1; then
    tail -n 60 "$fuzz_dir/$name.log"
    echo "FAIL: $name found a crash; reproducer in $fuzz_dir/artifacts/$name/" >&2
    return 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$fuzz_dir/$name.log" || true
}

status=0
run_fuzzer fuzz_gguf "$fuzz_dir/seeds/gguf" "$src_dir/tests/fuzz/gguf.dict" || status=1
run_fuzzer fuzz_safetensors "$fuzz_dir/seeds/safetensors" "$src_dir/tests/fuzz/json.dict" || status=1
run_fuzzer fuzz_hf_config "$fuzz_dir/seeds/json" "$src_dir/tests/fuzz/json.dict" || status=1
[ "$status" = 0 ] && echo "PASS: fuzz smoke"
exit "$status"
