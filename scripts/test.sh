#!/usr/bin/env bash
# Runs the whole test suite (builds first). CI runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 900
