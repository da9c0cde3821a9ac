#!/usr/bin/env bash
# Configures and builds llmesh (Release) into build/. Extra args go to cmake.
# Uses ccache when it is installed (scripts/install_deps.sh installs it): a
# rebuild, or a fresh clone on the same machine, then recompiles only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD"  # paths relative to the checkout: clones elsewhere share the cache
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" "$@" >/dev/null
ninja -C build -j"$(nproc)"
