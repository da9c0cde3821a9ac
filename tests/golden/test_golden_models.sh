#!/usr/bin/env bash
# Golden check: llmesh vs the numpy reference on the tiny generated models
# (tools/check_golden.py). Generates the models into $LLMESH_BINARY_DIR/models
# on first use. Exits 77 (skip) while llmesh has no `run --prompt-ids` yet.
set -euo pipefail
cd "${LLMESH_SOURCE_DIR:-$(dirname "$0")/../..}"
: "${LLMESH:?set LLMESH to the llmesh binary}"
models_dir="${LLMESH_BINARY_DIR:-build}/models"
if [ ! -f assets/npm/tokenizer-qwen3/models/tokenizer.json ]; then
  echo "missing assets: run scripts/fetch_assets.sh" >&2
  exit 1
fi
mkdir -p "$models_dir"
exec 9>"$models_dir/.lock"   # one golden script at a time generates / reads the models
flock 9
exec /usr/bin/python3 tools/check_golden.py --llmesh "$LLMESH" --models "$models_dir"
