#!/usr/bin/env bash
# Our reading of every GGUF block type is llama.cpp's: the numpy reference dequantizes
# blocks that llama-quantize wrote (tests/fixtures/quants/) to within each type's error
# and to the floats the C++ test expects (tools/check_quant_fixtures.py).
set -euo pipefail
cd "${LLMESH_SOURCE_DIR:-$(dirname "$0")/../..}"
exec /usr/bin/python3 tools/check_quant_fixtures.py
