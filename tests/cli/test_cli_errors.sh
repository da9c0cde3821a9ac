#!/usr/bin/env bash
# Bad input to the CLI: each case must exit 1 with one "llmesh: error:" line that
# names the file or argument — never a crash (exit >1 or a signal) or a hang.
set -uo pipefail
M="$LLMESH_BINARY_DIR/models"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failures=0

expect_error() {  # expect_error "what" "needle in message" cmd...
  local what="$1" needle="$2"
  shift 2
  local err rc
  err=$(timeout 60 "$@" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -ne 1 ] || ! grep -q "llmesh: error:" <<<"$err" || ! grep -qF -- "$needle" <<<"$err"; then
    echo "FAIL: $what (exit $rc): $err"
    failures=$((failures + 1))
  else
    echo "ok:   $what -> $(head -c 200 <<<"$err")"
  fi
}

gguf="$M/tiny-qwen3-q8_0.gguf"
size=$(stat -c %s "$gguf")
expect_error "missing file" "$T/nope.gguf" "$LLMESH" run --model "$T/nope.gguf" --prompt hi
head -c 20 "$gguf" > "$T/hdr.gguf"
expect_error "truncated header" "$T/hdr.gguf" "$LLMESH" run --model "$T/hdr.gguf" --prompt hi
head -c 3000 "$gguf" > "$T/meta.gguf"
expect_error "truncated metadata" "$T/meta.gguf" "$LLMESH" inspect --model "$T/meta.gguf"
head -c $((size * 7 / 10)) "$gguf" > "$T/data.gguf"
expect_error "truncated tensor data" "$T/data.gguf" "$LLMESH" run --model "$T/data.gguf" --prompt hi
{ printf 'GGUX'; tail -c +5 "$gguf"; } > "$T/magic.gguf"
expect_error "bad magic" "$T/magic.gguf" "$LLMESH" inspect --model "$T/magic.gguf"
: > "$T/empty.gguf"
expect_error "empty file" "$T/empty.gguf" "$LLMESH" inspect --model "$T/empty.gguf"

cp -r "$M/tiny-qwen3" "$T/arch"
sed -i 's/Qwen3ForCausalLM/MambaForCausalLM/; s/"model_type": *"qwen3"/"model_type": "mamba"/' "$T/arch/config.json"
expect_error "unknown architecture" "Mamba" "$LLMESH" inspect --model "$T/arch"

cp -r "$M/tiny-qwen3" "$T/notok"
rm "$T/notok/tokenizer.json"
expect_error "missing tokenizer" "tokenizer.json" "$LLMESH" run --model "$T/notok" --prompt hi

cp -r "$M/tiny-qwen3" "$T/badtpl"
/usr/bin/python3 - "$T/badtpl/tokenizer_config.json" <<'PY'
import json, sys
p = sys.argv[1]; c = json.load(open(p))
c["chat_template"] = "{% for m in messages %}\n{{ m.content }}\n{% if %}\n{% endfor %}"
json.dump(c, open(p, "w"))
PY
expect_error "template syntax error" "line 3" "$LLMESH" run --model "$T/badtpl" --chat --prompt hi

long=$(printf 'word %.0s' $(seq 1 200))
expect_error "prompt longer than the context" "context" "$LLMESH" run --model "$gguf" --prompt "$long" --ctx-size 64
expect_error "token id outside vocabulary" "--prompt-ids" "$LLMESH" run --model "$gguf" --prompt-ids 1,99999999
expect_error "non-numeric prompt id" "--prompt-ids" "$LLMESH" run --model "$gguf" --prompt-ids 1,x
expect_error "nothing to do" "--prompt" "$LLMESH" run --model "$gguf"

# Long context: past the trained length only with RoPE scaling, and the error says how.
expect_error "--ctx-size past the trained context" "--rope-scaling yarn --rope-scale 3" \
  "$LLMESH" run --model "$gguf" --prompt hi --ctx-size 100000
expect_error "--ctx-size past the scaled context" "the model's RoPE scaling (yarn, factor 2) reaches" \
  "$LLMESH" serve --model "$gguf" --rope-scaling yarn --rope-scale 2 --ctx-size 100000
expect_error "--rope-scale alone" "need --rope-scaling" "$LLMESH" run --model "$gguf" --prompt hi --rope-scale 4
expect_error "--rope-scaling without a factor" "needs --rope-scale" \
  "$LLMESH" run --model "$gguf" --prompt hi --rope-scaling yarn
cp -r "$M/tiny-qwen3" "$T/rope"
sed -i 's/"rope_scaling": null/"rope_scaling": {"rope_type": "su", "factor": 2.0}/' "$T/rope/config.json"
expect_error "unknown rope_scaling type" "unsupported rope scaling type 'su'" "$LLMESH" inspect --model "$T/rope"
if out=$(timeout 60 "$LLMESH" run --model "$gguf" --prompt-ids 1,2,3 --max-tokens 2 --rope-scaling yarn \
    --rope-scale 4 --yarn-orig-ctx 32768 --ctx-size 131072 --json 2>&1) && grep -q '"output_tokens":2' <<<"$out"; then
  echo "ok:   --rope-scaling yarn --rope-scale 4 runs at --ctx-size 131072"
else
  echo "FAIL: --rope-scaling yarn run: $out"
  failures=$((failures + 1))
fi

echo "$failures failed"
[ $failures -eq 0 ]
