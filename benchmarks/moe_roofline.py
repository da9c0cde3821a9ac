#!/usr/bin/env python3
"""Decode speed of `llmesh run` on mixture-of-experts models against the roofline of
the weights a token actually reads.

A decoded token streams every dense matrix once, the shared experts, the router, the
output head, and only k of the E routed experts of each MoE layer; the input embedding
is one row. So the roofline is bandwidth / active weight bytes, with

  active bytes = (active parameters - input embedding when untied) x bytes per parameter

(`llmesh inspect --json`: active_parameters already leaves out the idle experts; bytes
per parameter is the file's average, which for a Q8_0 file is 34/32 up to the small f32
norms). Models are interleaved round by round so noise on a shared machine hits them
alike; the bandwidth is measured before and after, the larger counts.

  benchmarks/moe_roofline.py --model models/deepseek3-reduced-q8_0.gguf [--model ...] [--rounds 3]
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_json(cmd):
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


def active_weight_bytes(info):
    per_param = info["weight_bytes"] / info["parameters"]
    active = info["active_parameters"]
    if not info["tie_word_embeddings"]:
        active -= info["vocab_size"] * info["hidden_size"]  # the lookup reads one row
    return active * per_param


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llmesh", default=os.path.join(ROOT, "build", "llmesh"))
    ap.add_argument("--membw", default=os.path.join(ROOT, "build", "benchmarks", "llmesh_membw"))
    ap.add_argument("--model", action="append", required=True, help="a GGUF file (repeat to interleave several)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--context", type=int, default=512, help="prompt tokens before the long-context decode")
    ap.add_argument("--decode-tokens", type=int, default=32)
    args = ap.parse_args()

    def bandwidth():
        out = subprocess.run([args.membw, str(args.threads)], check=True, capture_output=True, text=True).stdout
        return float(re.search(r"best of \d+: ([0-9.]+) GB/s \(wall clock\)", out).group(1)) * 1e9

    infos = {m: run_json([args.llmesh, "inspect", "--model", m, "--json"]) for m in args.model}
    bandwidths = [bandwidth()]
    rng = random.Random(0)
    short = ",".join(str(rng.randrange(1000, 100000)) for _ in range(16))
    long = ",".join(str(rng.randrange(1000, 100000)) for _ in range(args.context))
    results = {m: {"decode": [], "decode_long": [], "prefill": []} for m in args.model}

    def generate(model, ids):
        return run_json([args.llmesh, "run", "--model", model, "--prompt-ids", ids, "--max-tokens",
                         str(args.decode_tokens), "--ignore-eos", "--temperature", "0", "--threads",
                         str(args.threads), "--json"])

    for r in range(args.rounds):
        for m in args.model:
            s, l = generate(m, short), generate(m, long)
            results[m]["decode"].append(s["decode_tokens_per_s"])
            results[m]["decode_long"].append(l["decode_tokens_per_s"])
            results[m]["prefill"].append(l["prefill_tokens_per_s"])
            print(f"round {r + 1} {os.path.basename(m)}: decode {s['decode_tokens_per_s']:.2f} tok/s, after "
                  f"{args.context}: {l['decode_tokens_per_s']:.2f}, prefill {l['prefill_tokens_per_s']:.1f}",
                  file=sys.stderr)
    bandwidths.append(bandwidth())
    bw = max(bandwidths)
    print(f"Memory bandwidth (llmesh_membw, {args.threads} threads, before/after): "
          f"{bandwidths[0] / 1e9:.1f} / {bandwidths[1] / 1e9:.1f} GB/s; roofline uses {bw / 1e9:.1f}\n")
    print(f"| model | active weights / token | KV / token | decode tok/s | roofline tok/s | % of roofline "
          f"| decode after {args.context} | prefill tok/s ({args.context}) |")
    print("|---|---|---|---|---|---|---|---|")
    for m in args.model:
        info, res = infos[m], results[m]
        active = active_weight_bytes(info)
        decode = statistics.median(res["decode"])
        roofline = bw / active
        print(f"| {os.path.basename(m)} | {active / 2**20:.0f} MiB | {info['kv_bytes_per_token'] / 1024:.1f} KiB "
              f"| {decode:.2f} | {roofline:.2f} | {100 * decode / roofline:.0f}% "
              f"| {statistics.median(res['decode_long']):.2f} | {statistics.median(res['prefill']):.1f} |")
    print(f"\nmedian of {args.rounds} interleaved rounds; {args.threads} threads; {args.decode_tokens} decoded tokens "
          f"after a 16-token prompt, and after a {args.context}-token one")


if __name__ == "__main__":
    main()
