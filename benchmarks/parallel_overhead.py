#!/usr/bin/env python3
"""What splitting a model over MPI ranks costs on one machine: prefill and
decode tok/s of 1 rank x 2 threads against 2 ranks x 1 thread in tensor,
pipeline and expert parallel, and the bytes rank 0 sends per decoded token,
next to what `llmesh inspect --plan` predicts. Layouts are interleaved round by round (this machine's noise hits
them alike); each number is the median over rounds.

  benchmarks/parallel_overhead.py [--models DIR] [--rounds 3] [--prompt 256] [--decode 64]

Models: models/qwen3-0.6b-q8_0.gguf and models/qwen3-moe-reduced-q8_0.gguf
(tools/gen_models.py --preset qwen3-0.6b / qwen3-moe-reduced --dtypes q8_0).
Per decoded token = (a run of N tokens - a run of 1 token) / (N - 1).
"""
import argparse
import json
import os
import random
import statistics
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLMESH = os.path.join(ROOT, "build", "llmesh")
MPIRUN = ["mpirun", "--oversubscribe", "--bind-to", "none"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_vader_single_copy_mechanism="none")

LAYOUTS = {  # name: (ranks, threads per rank, flags)
    "1 rank x 2 threads": (1, 2, []),
    "tp 2 (2 x 1 thread)": (2, 1, ["--tp", "2"]),
    "pp 2 (2 x 1 thread)": (2, 1, ["--pp", "2"]),
    "ep 2 (2 x 1 thread)": (2, 1, ["--ep", "2"]),
    "pp 2, ranks of 0.5 / 0.25 GiB": (2, 1, ["--pp", "2"]),  # placement follows the (reported) memory
}


def run(model, layout, prompt, max_tokens):
    ranks, threads, flags = LAYOUTS[layout]
    cmd = [LLMESH, "run", "--model", model, "--prompt-ids", prompt, "--max-tokens", str(max_tokens),
           "--ignore-eos", "--temperature", "0", "--threads", str(threads), "--json", *flags]
    if "GiB" in layout:
        # Each rank reports its own figure: an MPMD launch, one app context per rank.
        base = cmd
        cmd = MPIRUN + ["-np", "1"] + base + ["--rank-memory-gib", "0.5", ":", "-np", "1"] + base + ["--rank-memory-gib", "0.25"]
    elif ranks > 1:
        cmd = MPIRUN + ["-np", str(ranks)] + cmd
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, env=ENV).stdout)
    return out


def predicted(model, layout):
    _, _, flags = LAYOUTS[layout]
    out = json.loads(subprocess.run([LLMESH, "inspect", "--model", model, "--plan", "--json", *flags],
                                    check=True, capture_output=True, text=True).stdout)
    return out["plan"]["rank0_sent_bytes_per_token"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=os.path.join(ROOT, "models"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prompt", type=int, default=256)
    ap.add_argument("--decode", type=int, default=64)
    args = ap.parse_args()
    random.seed(7)
    prompt = ",".join(str(random.randrange(1000, 100000)) for _ in range(args.prompt))
    cases = [("qwen3-0.6b-q8_0.gguf", ["1 rank x 2 threads", "tp 2 (2 x 1 thread)", "pp 2 (2 x 1 thread)",
                                       "pp 2, ranks of 0.5 / 0.25 GiB"]),
             ("qwen3-moe-reduced-q8_0.gguf", ["1 rank x 2 threads", "tp 2 (2 x 1 thread)", "pp 2 (2 x 1 thread)",
                                              "ep 2 (2 x 1 thread)"])]
    samples = {}
    for r in range(args.rounds):
        for name, layouts in cases:
            model = os.path.join(args.models, name)
            for layout in layouts:
                full = run(model, layout, prompt, args.decode)
                one = run(model, layout, prompt, 1)
                s = samples.setdefault((name, layout), {"prefill": [], "decode": [], "bytes": []})
                s["prefill"].append(full["prefill_tokens_per_s"])
                s["decode"].append(full["decode_tokens_per_s"])
                if "comm" in full:
                    n = args.decode - 1
                    s["bytes"].append((full["comm"]["rank0_bytes_sent"] - one["comm"]["rank0_bytes_sent"]) / n)
                print(f"round {r + 1}: {name} {layout}: prefill {full['prefill_tokens_per_s']:.1f}, "
                      f"decode {full['decode_tokens_per_s']:.2f} tok/s", flush=True)
    print(f"\n| model | layout | prefill tok/s ({args.prompt}) | decode tok/s | vs 1 rank (prefill / decode) "
          "| rank 0 sent / decode token | predicted (inspect --plan) |")
    print("|---|---|---|---|---|---|---|")
    for name, layouts in cases:
        model = os.path.join(args.models, name)
        base = samples[(name, layouts[0])]
        for layout in layouts:
            s = samples[(name, layout)]
            pre, dec = statistics.median(s["prefill"]), statistics.median(s["decode"])
            ratio = f"{pre / statistics.median(base['prefill']):.2f}x / {dec / statistics.median(base['decode']):.2f}x"
            if s["bytes"]:
                comm = f"{statistics.median(s['bytes']) / 1024:.1f} KiB | {predicted(model, layout) / 1024:.1f} KiB"
            else:
                comm = "- | -"
            print(f"| {name.replace('.gguf', '')} | {layout} | {pre:.1f} | {dec:.2f} | {ratio} | {comm} |")


if __name__ == "__main__":
    main()
