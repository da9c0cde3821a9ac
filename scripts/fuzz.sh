#!/usr/bin/env bash
# Longer fuzzing runs of the libFuzzer targets in tests/fuzz (ASan + UBSan):
#   scripts/fuzz.sh --minutes N [--target NAME]...
# Builds them with clang the way tests/fuzz/test_fuzz_smoke.sh does (in
# build/fuzz/build), writes the seed corpus, then runs each target (all, or the
# --target ones: gguf, safetensors, hf_config, api_request, jinja, json_schema,
# tokenizer, output_parser; with or without the fuzz_ prefix) for N minutes,
# one after another. Corpora grow in build/fuzz/corpus/<target> and are kept
# between runs; crashes go to build/fuzz/artifacts/<target>/. Prints executions
# and crashes per target; exits non-zero when any target found one.
# LLMESH_FUZZ_JOBS=K runs K fuzzing processes per target (default 1).
set -euo pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)
fuzz_dir=$src_dir/build/fuzz
minutes=
targets=()
all_targets=(gguf safetensors hf_config api_request jinja json_schema tokenizer output_parser)
jobs=${LLMESH_FUZZ_JOBS:-1}

usage() { sed -n 2,12p "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --minutes) minutes=${2:?--minutes needs a value}; shift 2 ;;
    --target) targets+=("${2#fuzz_}"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "unknown argument: $1" >&2; usage 2 ;;
  esac
done
[[ $minutes =~ ^[0-9]+([.][0-9]+)?$ ]] || { echo "--minutes N is required" >&2; usage 2; }
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "unknown target: $t (known: ${all_targets[*]})" >&2; exit 2; }
done
command -v clang++ > /dev/null || { echo "clang++ is needed (apt-get install clang)" >&2; exit 1; }
seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')

seeds_of() {
  case $1 in
    gguf|safetensors) echo "$1" ;; hf_config) echo json ;; api_request) echo api ;;
    json_schema) echo schema ;; output_parser) echo output ;; *) echo "$1" ;;
  esac
}
dict_of() {
  case $1 in
    gguf) echo gguf ;; safetensors|hf_config) echo json ;; api_request|json_schema) echo api ;;
    jinja) echo jinja ;; *) echo output ;;
  esac
}

echo "== building in $fuzz_dir/build"
mkdir -p "$fuzz_dir"
cmake -S "$src_dir" -B "$fuzz_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DLLMESH_FUZZ=ON -DLLMESH_BUILD_TESTS=OFF > "$fuzz_dir.cmake.log" 2>&1 ||
  { cat "$fuzz_dir.cmake.log"; exit 1; }
ninja -C "$fuzz_dir/build" $(printf 'fuzz_%s ' "${targets[@]}")
rm -rf "$fuzz_dir/seeds"
/usr/bin/python3 "$src_dir/tests/fuzz/make_seeds.py" "$fuzz_dir/seeds"

summary=()
status=0
for t in "${targets[@]}"; do
  name=fuzz_$t
  corpus=$fuzz_dir/corpus/$name artifacts=$fuzz_dir/artifacts/$name log=$fuzz_dir/$name.long.log
  mkdir -p "$corpus" "$artifacts"
  regressions=$src_dir/tests/fuzz/corpus_regressions/$t
  [ -d "$regressions" ] || regressions=
  before=$(ls "$artifacts" | wc -l)
  echo "== $name for ${minutes} min (log: $log)"
  extra=()
  [ "$jobs" -gt 1 ] && extra=(-jobs="$jobs" -workers="$jobs")
  rc=0
  "$fuzz_dir/build/tests/fuzz/$name" "$corpus" "$fuzz_dir/seeds/$(seeds_of "$t")" $regressions \
    -dict="$src_dir/tests/fuzz/$(dict_of "$t").dict" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 -artifact_prefix="$artifacts/" "${extra[@]}" \
    > "$log" 2>&1 || rc=$?
  [ "$jobs" -gt 1 ] && cat fuzz-*.log >> "$log" 2>/dev/null && rm -f fuzz-*.log
  execs=$(grep -E "stat::number_of_executed_units" "$log" | awk '{s += $2} END {print s + 0}')
  rate=$(awk -v e="$execs" -v s="$seconds" 'BEGIN { printf "%d", (s > 0 ? e / s : 0) }')
  crashes=$(( $(ls "$artifacts" | wc -l) - before ))
  [ "$rc" = 0 ] || status=1
  summary+=("$(printf '%-20s %12s execs %8s/s  corpus %6s  new crashes %s%s' "$name" "$execs" "$rate" \
    "$(ls "$corpus" | wc -l)" "$crashes" "$([ "$rc" = 0 ] || echo "  (exit $rc: see $log)")")")
done
echo "== summary ($minutes min per target)"
printf '%s\n' "${summary[@]}"
exit "$status"
