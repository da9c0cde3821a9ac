#!/usr/bin/env python3
"""llmesh against llama.cpp on the same GGUF files, the same CPU and the same threads.

For each model file: prefill of --prompt tokens (pp512), decode of --decode tokens at depth 0
(tg64) and after --depth tokens of context (tg64 @ 2048), for llmesh (`llmesh run --json`) and
for llama.cpp, interleaved A B A B so that noise on a shared machine hits both alike; best of
--rounds each. Prints a markdown table of tok/s and ratios llmesh / llama.cpp, and each decode
against the memory-bandwidth roofline measured in the same minutes (`llmesh_membw`).

llama.cpp is, in order of preference:
  * llama-bench from --llama-cpp (default ../shared/peers/llama.cpp/bin), when it runs on this CPU
    (that build is for AVX-512: on other CPUs it dies of SIGILL, and the script says so);
  * node-llama-cpp's prebuilt CPU libraries through benchmarks/llamacpp_node_bench.mjs, when
    --node-modules DIR holds node-llama-cpp (`npm install --prefix DIR node-llama-cpp`).

Files: models/{preset}-{type}.gguf. A missing one is made by llama-quantize from the preset's F32
(written by tools/gen_models.py) when llama-quantize runs here, else by tools/gen_models.py itself
when it knows the type.

  benchmarks/vs_llamacpp.py [--only qwen3-0.6b:q8_0,qwen3-moe-reduced:bf16] [--rounds 3]
                            [--threads 2] [--kernels avx2] [--node-modules /opt/peer-npm/node_modules]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_VARIANTS = ("qwen3-0.6b:bf16,qwen3-0.6b:q8_0,qwen3-0.6b:q4_0,qwen3-0.6b:q4_k_m,qwen3-0.6b:q6_k,"
                    "qwen3-moe-reduced:bf16,qwen3-moe-reduced:q8_0,qwen3-moe-reduced:q4_k_m")
SIGILL_EXIT = (132, -4)
CANNOT_LOAD_EXIT = 127  # a shared library missing or unreadable


def log(message):
    print(message, file=sys.stderr, flush=True)


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def run_json(cmd, env=None):
    proc = run(cmd, env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} ... exited {proc.returncode}: {proc.stderr.strip()[-800:]}")
    return json.loads(proc.stdout)


class LlamaBench:
    """llama.cpp's own benchmark tool."""
    name = "llama-bench"

    def __init__(self, path, threads):
        self.path, self.threads = path, threads

    def measure(self, model, prompt, decode, depth):
        base = [self.path, "-m", model, "-t", str(self.threads), "-r", "1", "-o", "json"]
        fast = run_json(base + ["-p", str(prompt), "-n", str(decode)])
        deep = run_json(base + ["-p", "0", "-n", str(decode), "-d", str(depth)])
        rate = lambda rows, key: next(r["avg_ts"] for r in rows if r[key] > 0)
        return {"prefill": rate(fast, "n_prompt"), "decode": rate(fast, "n_gen"), "decode_deep": rate(deep, "n_gen")}


class NodeLlamaCpp:
    """llama.cpp's libraries as node-llama-cpp ships them (one CPU variant per generation)."""
    name = "llama.cpp (node-llama-cpp)"

    def __init__(self, node_modules, threads):
        self.env = dict(os.environ, NODE_PATH=node_modules)
        self.cwd = os.path.dirname(node_modules)
        self.threads = threads

    def bench(self, model, prompt, decode, depth):
        script = os.path.join(ROOT, "benchmarks", "llamacpp_node_bench.mjs")
        proc = subprocess.run(["node", script, "--model", os.path.abspath(model), "--threads", str(self.threads),
                               "--prompt", str(prompt), "--decode", str(decode), "--depth", str(depth)],
                              capture_output=True, text=True, env=self.env, cwd=self.cwd)
        if proc.returncode != 0:
            raise RuntimeError(f"llamacpp_node_bench.mjs exited {proc.returncode}: {proc.stderr.strip()[-800:]}")
        return json.loads(proc.stdout)

    def measure(self, model, prompt, decode, depth):
        fast = self.bench(model, prompt, decode, 0)
        deep = self.bench(model, 0, decode, depth)
        return {"prefill": fast["prefill_tokens_per_s"], "decode": fast["decode_tokens_per_s"],
                "decode_deep": deep["decode_tokens_per_s"]}


class Llmesh:
    name = "llmesh"

    def __init__(self, path, threads, kernels):
        self.path, self.threads = path, threads
        self.env = dict(os.environ, **({"LLMESH_KERNELS": kernels} if kernels else {}))
        rng = random.Random(0)
        self.ids = lambda n: ",".join(str(rng.randrange(1000, 100000)) for _ in range(n))

    def generate(self, model, prompt_tokens, max_tokens):
        return run_json([self.path, "run", "--model", model, "--prompt-ids", self.ids(prompt_tokens), "--max-tokens",
                         str(max_tokens), "--ignore-eos", "--temperature", "0", "--threads", str(self.threads),
                         "--json"], self.env)

    def measure(self, model, prompt, decode, depth):
        # One generated token ends the prefill run; the decode runs time decode + 1 tokens less the first.
        return {"prefill": self.generate(model, prompt, 1)["prefill_tokens_per_s"],
                "decode": self.generate(model, 1, decode + 1)["decode_tokens_per_s"],
                "decode_deep": self.generate(model, depth, decode + 1)["decode_tokens_per_s"]}


def runs_here(cmd):
    """False when the binary is missing, cannot load its libraries, or dies of an illegal
    instruction (built for a newer CPU)."""
    if not os.path.exists(cmd[0]):
        return False
    return run(cmd).returncode not in SIGILL_EXIT + (CANNOT_LOAD_EXIT,)


def pick_peer(args, probe_model):
    llama_bench = os.path.join(args.llama_cpp, "llama-bench")
    if os.path.exists(llama_bench):
        if runs_here([llama_bench, "-m", probe_model, "-t", "1", "-p", "1", "-n", "1", "-r", "1"]):
            return LlamaBench(llama_bench, args.threads)
        log(f"{llama_bench} does not run here (illegal instruction: built for a newer CPU; or its libraries)")
    if args.node_modules and os.path.isdir(os.path.join(args.node_modules, "node-llama-cpp")):
        return NodeLlamaCpp(args.node_modules, args.threads)
    sys.exit("no llama.cpp that runs here: pass --node-modules DIR after `npm install --prefix DIR node-llama-cpp`")


def ensure_model(args, preset, qtype):
    path = os.path.join(args.models, f"{preset}-{qtype}.gguf")
    if os.path.exists(path):
        return path
    quantize = os.path.join(args.llama_cpp, "llama-quantize")
    f32 = os.path.join(args.models, f"{preset}-f32.gguf")
    gen = ["/usr/bin/python3", os.path.join(ROOT, "tools", "gen_models.py"), "--out", args.models, "--preset", preset]
    if os.path.exists(quantize) and runs_here([quantize, "--help"]):
        if not os.path.exists(f32):
            log(f"generating {f32} ...")
            subprocess.run(gen + ["--dtypes", "f32"], check=True, stdout=sys.stderr)
        log(f"llama-quantize {f32} -> {path} ({qtype.upper()}) ...")
        proc = run([quantize, f32, path, qtype.upper()])
        if proc.returncode in SIGILL_EXIT:
            os.unlink(path) if os.path.exists(path) else None
        elif proc.returncode != 0:
            raise RuntimeError(f"llama-quantize failed: {proc.stderr.strip()[-800:]}")
        else:
            return path
    log(f"generating {path} with tools/gen_models.py ...")
    subprocess.run(gen + ["--dtypes", qtype], check=True, stdout=sys.stderr)
    return path


def bandwidth(args):
    out = run([args.membw, str(args.threads)]).stdout
    return float(re.search(r"best of \d+: ([0-9.]+) GB/s \(wall clock\)", out).group(1)) * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llmesh", default=os.path.join(ROOT, "build", "llmesh"))
    ap.add_argument("--membw", default=os.path.join(ROOT, "build", "benchmarks", "llmesh_membw"))
    ap.add_argument("--models", default=os.path.join(ROOT, "models"))
    ap.add_argument("--llama-cpp", default=os.path.join(ROOT, "..", "shared", "peers", "llama.cpp", "bin"),
                    help="folder with llama-bench and llama-quantize")
    ap.add_argument("--node-modules", help="node_modules folder holding node-llama-cpp (the fallback peer)")
    ap.add_argument("--only", default=DEFAULT_VARIANTS, help="comma-separated PRESET:TYPE list")
    ap.add_argument("--kernels", help="LLMESH_KERNELS for llmesh (ref, avx2, avx512; default: the best)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--decode", type=int, default=64)
    ap.add_argument("--depth", type=int, default=2048)
    args = ap.parse_args()

    variants = [tuple(v.split(":")) for v in args.only.split(",")]
    paths = {v: ensure_model(args, *v) for v in variants}
    peer = pick_peer(args, paths[variants[0]])
    ours = Llmesh(args.llmesh, args.threads, args.kernels)
    log(f"llama.cpp: {peer.name}")

    # Bytes read per decoded token: the active share of the weights (all of them for a dense model).
    read_per_token = {}
    for v, path in paths.items():
        info = run_json([args.llmesh, "inspect", "--model", path, "--json"])
        read_per_token[v] = info["weight_bytes"] * info["active_parameters"] / info["parameters"]
        kernels = info.get("cpu_kernels")
    bandwidths = [bandwidth(args)]

    best = {(v, side): {} for v in variants for side in ("llmesh", "peer")}
    for r in range(args.rounds):
        for v in variants:
            for side, bench in (("llmesh", ours), ("peer", peer)):
                got = bench.measure(paths[v], args.prompt, args.decode, args.depth)
                for key, value in got.items():
                    best[(v, side)][key] = max(best[(v, side)].get(key, 0.0), value)
                log(f"round {r + 1} {v[0]} {v[1]} {side}: prefill {got['prefill']:.1f}, decode {got['decode']:.2f}, "
                    f"decode @{args.depth} {got['decode_deep']:.2f} tok/s")
    bandwidths.append(bandwidth(args))
    bw = max(bandwidths)

    print(f"llmesh ({args.kernels or kernels} kernels) vs {peer.name}; {args.threads} threads; best of {args.rounds} "
          f"interleaved rounds. Bandwidth (llmesh_membw {args.threads}, before/after): {bandwidths[0] / 1e9:.1f} / "
          f"{bandwidths[1] / 1e9:.1f} GB/s.\n")
    print(f"| model | type | pp{args.prompt} llmesh / llama.cpp | tg{args.decode} | tg{args.decode} @ {args.depth} "
          f"| llmesh decode % of roofline | llmesh decode @ {args.depth} / @ 0 |")
    print("|---|---|---|---|---|---|---|")
    for v in variants:
        a, b = best[(v, "llmesh")], best[(v, "peer")]
        cell = lambda key: f"{a[key]:.1f} / {b[key]:.1f} ({a[key] / b[key]:.2f}x)"
        roofline = bw / read_per_token[v]
        print(f"| {v[0]} | {v[1]} | {cell('prefill')} | {cell('decode')} | {cell('decode_deep')} | "
              f"{100 * a['decode'] / roofline:.0f}% | {100 * a['decode_deep'] / a['decode']:.0f}% |")


if __name__ == "__main__":
    main()
