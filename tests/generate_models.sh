#!/usr/bin/env bash
# ctest fixture: generates the tiny reference models into $LLMESH_BINARY_DIR/models
# once, and again only when the generator's sources change.
set -euo pipefail
out="${LLMESH_BINARY_DIR:?}/models"
stamp="$out/.generator-hash"
hash=$(cat tools/*.py tools/reference/*.py 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ]; then
  echo "models up to date in $out"
  exit 0
fi
rm -rf "$out"
mkdir -p "$out"
/usr/bin/python3 tools/gen_models.py --out "$out"
echo "$hash" > "$stamp"
