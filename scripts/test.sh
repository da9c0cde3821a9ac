#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds, then ctest.
# One command on a fresh Debian 12 machine; CI (.ci/run) runs exactly this.
# Extra arguments go to ctest (e.g. -R serve).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@"
