#!/usr/bin/env bash
# Self-checks of the numpy reference and the model files it writes (no llmesh
# needed): quantization formats, RoPE, files read back, KV-cache consistency,
# GGUF Llama permutation, tolerance budget (tools/check_reference.py). Then the
# golden check itself run against the reference-based stand-in engine: it must
# pass, and must fail when the stand-in's logits are perturbed.
set -euo pipefail
cd "${LLMESH_SOURCE_DIR:-$(dirname "$0")/../..}"
models_dir="${LLMESH_BINARY_DIR:-build}/models"
mkdir -p "$models_dir"
exec 9>"$models_dir/.lock"   # one golden script at a time generates / reads the models
flock 9

/usr/bin/python3 tools/check_reference.py --models "$models_dir"

echo "== golden check against the stand-in engine (must pass)"
/usr/bin/python3 tools/check_golden.py --llmesh tools/stand_in_llmesh.py --models "$models_dir" \
  --only tiny-llama3 --variants f32-safetensors,f32-gguf,q4_0-gguf

echo "== golden check against a perturbed stand-in (must fail)"
set +e
LLMESH_STAND_IN_NOISE=1e-3 /usr/bin/python3 tools/check_golden.py --llmesh tools/stand_in_llmesh.py \
  --models "$models_dir" --only tiny-qwen2 --variants f32-gguf > /tmp/golden_perturbed.$$ 2>&1
status=$?
set -e
tail -3 /tmp/golden_perturbed.$$; rm -f /tmp/golden_perturbed.$$
if [ "$status" -ne 1 ]; then
  echo "perturbed logits were not caught (exit $status)" >&2
  exit 1
fi
echo "perturbed logits caught as expected"
