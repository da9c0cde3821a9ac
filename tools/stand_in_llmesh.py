#!/usr/bin/python3
"""A stand-in for `llmesh run` built on the numpy reference, so the golden
check can be exercised before (and independently of) the real engine.

  stand_in_llmesh.py run --model PATH --prompt-ids 1,2,3 --max-tokens 32 \
      --temperature 0 --json --dump-logits FILE

It loads the model only from the file (HF dir or GGUF; Llama GGUF runs with
interleaved RoPE on the permuted q/k rows and the file's rope_freqs), so a
wrong permutation, name or metadata in the written files shows up as a
golden failure. LLMESH_STAND_IN_NOISE=R adds relative noise R to the dumped
logits (the self-test uses it to see the check fail).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reference import forward, load_model  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run")
    run.add_argument("--model", required=True)
    run.add_argument("--prompt-ids", required=True)
    run.add_argument("--max-tokens", type=int, default=32)
    run.add_argument("--temperature", type=float, default=0.0)
    run.add_argument("--json", action="store_true")
    run.add_argument("--dump-logits")
    run.add_argument("--kv-cache-dtype", default="f32")  # the reference keeps K/V in float64 either way
    args = parser.parse_args()
    if args.temperature != 0:
        parser.error("the stand-in only does greedy decoding")
    if os.path.isdir(args.model):
        spec, weights = load_model.load_hf_dir(args.model)
        model = forward.Transformer(spec, weights)
    else:
        spec, weights, rope_style, inv_freq, _ = load_model.load_gguf(args.model, gguf_layout_rope=True)
        model = forward.Transformer(spec, weights, rope_style=rope_style, inv_freq=inv_freq)
    prompt_ids = [int(t) for t in args.prompt_ids.split(",")]
    logits, output_ids, _, _ = model.greedy(prompt_ids, args.max_tokens)
    noise = float(os.environ.get("LLMESH_STAND_IN_NOISE", "0"))
    if noise:
        rng = np.random.default_rng(0)
        logits = logits + noise * np.max(np.abs(logits)) * rng.standard_normal(logits.shape)
    if args.dump_logits:
        logits.astype("<f4").tofile(args.dump_logits)
    print(json.dumps({"prompt_ids": prompt_ids, "output_ids": output_ids, "text": ""}))


if __name__ == "__main__":
    main()
