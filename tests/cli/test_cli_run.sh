#!/usr/bin/env bash
# `llmesh run / inspect / tokenize` end to end on the tiny generated models:
# the --json contracts, seeds, chat templating and inspect's arithmetic.
set -euo pipefail
export M="$LLMESH_BINARY_DIR/models"
exec /usr/bin/python3 - <<'PY'
import json, os, subprocess, sys

llmesh, M = os.environ["LLMESH"], os.environ["M"]
failures = 0

def check(cond, what):
    global failures
    print(("ok:   " if cond else "FAIL: ") + what)
    failures += 0 if cond else 1

def run(*args):
    out = subprocess.run([llmesh, *args], check=True, capture_output=True, text=True, timeout=120).stdout
    return json.loads(out)

q = f"{M}/tiny-qwen3-q8_0.gguf"
r = run("run", "--model", q, "--prompt", "The capital of France is", "--max-tokens", "12", "--temperature", "0", "--json", "--ignore-eos")
check(set(r) >= {"prompt_ids", "output_ids", "text", "prompt_tokens", "output_tokens", "prefill_tokens_per_s", "decode_tokens_per_s"}, "run --json has the documented keys")
check(r["prompt_tokens"] == len(r["prompt_ids"]) and r["output_tokens"] == len(r["output_ids"]) == 12, "token counts match the id lists")
tok = run("tokenize", "--model", q, "--text", "The capital of France is", "--json")
check(tok["ids"] == r["prompt_ids"], "run's prompt ids equal tokenize's ids")
check(len(tok["pieces"]) == len(tok["ids"]) and tok["pieces"][1].startswith("Ġ"), "tokenize pieces are byte-level strings")

# The same weights from safetensors and GGUF give the same greedy tokens.
r_st = run("run", "--model", f"{M}/tiny-qwen3", "--prompt", "The capital of France is", "--max-tokens", "12", "--temperature", "0", "--json", "--ignore-eos")
r_gg = run("run", "--model", f"{M}/tiny-qwen3-f32.gguf", "--prompt", "The capital of France is", "--max-tokens", "12", "--temperature", "0", "--json", "--ignore-eos")
check(r_st["output_ids"] == r_gg["output_ids"], "safetensors and GGUF f32 agree on greedy tokens")

a = run("run", "--model", q, "--prompt", "Hello", "--max-tokens", "16", "--temperature", "1.0", "--seed", "7", "--json", "--ignore-eos")
b = run("run", "--model", q, "--prompt", "Hello", "--max-tokens", "16", "--temperature", "1.0", "--seed", "7", "--json", "--ignore-eos")
c = run("run", "--model", q, "--prompt", "Hello", "--max-tokens", "16", "--temperature", "1.0", "--seed", "8", "--json", "--ignore-eos")
check(a["output_ids"] == b["output_ids"], "same seed, same tokens")
check(a["output_ids"] != c["output_ids"], "another seed, other tokens")

chat = subprocess.run([llmesh, "run", "--model", q, "--chat", "--prompt", "Hi there", "--system", "Be brief.", "--show-prompt",
                       "--max-tokens", "4", "--json", "--enable-thinking", "false"], check=True, capture_output=True, text=True)
check("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n" in chat.stderr,
      "--chat renders the Qwen3 template (--show-prompt)")
ids = json.loads(chat.stdout)["prompt_ids"]
check(ids[:3] == [151644, 8948, 198], "chat prompt starts with <|im_start|>system\\n")

# inspect: parameter count from the config, computed here independently.
cfg = json.load(open(f"{M}/tiny-qwen3/config.json"))
h, L, V, ff = cfg["hidden_size"], cfg["num_hidden_layers"], cfg["vocab_size"], cfg["intermediate_size"]
nh, nkv, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
per_layer = h * nh * hd + 2 * h * nkv * hd + nh * hd * h + 3 * h * ff + 2 * h + 2 * hd
expected = V * h + L * per_layer + h  # tied embeddings
info = run("inspect", "--model", f"{M}/tiny-qwen3", "--json")
check(info["parameters"] == expected, f"inspect parameters {info['parameters']} == {expected}")
check(info["kv_cache_dtype"] == "f16" and info["kv_bytes_per_token"] == L * nkv * hd * 2 * 2,
      "inspect KV bytes per token (default f16)")
# q8_0: per 32 values a 2-byte scale and 32 int8
check(info["kv_bytes_per_token_by_dtype"] == {"f32": L * nkv * hd * 2 * 4, "f16": L * nkv * hd * 2 * 2,
                                              "bf16": L * nkv * hd * 2 * 2, "q8_0": L * nkv * (hd // 32) * 34 * 2},
      "inspect KV bytes per token of every KV dtype")
check(info["has_chat_template"] is True and info["context_length"] == cfg["max_position_embeddings"], "inspect context and template")

moe = json.load(open(f"{M}/tiny-qwen3moe/config.json"))
info = run("inspect", "--model", f"{M}/tiny-qwen3moe", "--json")
E, k, mff = moe["num_experts"], moe["num_experts_per_tok"], moe["moe_intermediate_size"]
check(info["parameters"] - info["active_parameters"] == moe["num_hidden_layers"] * (E - k) * 3 * moe["hidden_size"] * mff,
      "inspect active parameters of the MoE model")

# Mistral / Devstral checkpoints (MistralForCausalLM) are Llama's blocks: tiny-llama3's weights
# under a Mistral config give the same logits; a sliding window changes them past it, and no
# longer caps the context.
import shutil, tempfile
with tempfile.TemporaryDirectory() as tmp:
    mistral = os.path.join(tmp, "tiny-mistral")
    shutil.copytree(f"{M}/tiny-llama3", mistral)
    cfg = json.load(open(f"{mistral}/config.json"))
    cfg.update(architectures=["MistralForCausalLM"], model_type="mistral", sliding_window=None)
    json.dump(cfg, open(f"{mistral}/config.json", "w"))
    args = ["--prompt-ids", "128000,791,6864,315,9822,374", "--max-tokens", "8", "--temperature", "0", "--json",
            "--ignore-eos", "--dump-logits"]
    llama = run("run", "--model", f"{M}/tiny-llama3", *args, f"{tmp}/llama.json")
    as_mistral = run("run", "--model", mistral, *args, f"{tmp}/mistral.json")
    check(llama["output_ids"] == as_mistral["output_ids"] and
          open(f"{tmp}/llama.json", "rb").read() == open(f"{tmp}/mistral.json", "rb").read(),
          "MistralForCausalLM = LlamaForCausalLM on the same weights (tokens and logits)")
    cfg["sliding_window"] = 4
    json.dump(cfg, open(f"{mistral}/config.json", "w"))
    info = subprocess.run([llmesh, "inspect", "--model", mistral, "--json"], capture_output=True, text=True, timeout=60)
    j = json.loads(info.stdout)
    check(j["context_length"] == cfg["max_position_embeddings"] and j["sliding_window"] == 4 and
          j["sliding_window_layers"] == cfg["num_hidden_layers"] and "sliding" not in info.stderr,
          "a Mistral sliding window: inspect shows it, the context stays the model's, no warning")
    windowed = run("run", "--model", mistral, *args, f"{tmp}/windowed.json")
    check(windowed["output_ids"] != llama["output_ids"] or
          open(f"{tmp}/windowed.json", "rb").read() != open(f"{tmp}/llama.json", "rb").read(),
          "a 4-token window changes a 6-token prompt's logits")

print(f"{failures} failed")
sys.exit(1 if failures else 0)
PY
