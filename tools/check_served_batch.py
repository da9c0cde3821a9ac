#!/usr/bin/env python3
"""Served-batch goldens: llmesh's engine, batching several requests at once,
against the numpy reference and against each prompt run alone.

  /usr/bin/python3 tools/check_served_batch.py --llmesh build/llmesh --models DIR [--only NAME]

For every tiny model's f32 files it runs all golden prompts, each twice (the
copies share prefix blocks once the first copy's blocks are cached), as one
`llmesh run --prompt-ids A --prompt-ids B ...` under each engine setting:
token budgets 16 / 64 / 512 per step (mixed prefill chunks and decodes),
prefix cache on and off, and a KV pool so small that requests are preempted
and recomputed. Every request's logits at its last prompt position must be
within the f32 tolerance of the reference and of the same prompt run alone,
and its 32 greedy tokens identical to the reference's (check_golden.py's
rules, near-ties reported). The settings meant to exercise the prefix cache
and preemption must show prefix hits / preemptions, or the check fails.
Exit status: 0 all pass, 1 any failure.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS_DIR)
from check_golden import Case, check_case, ensure_models  # noqa: E402
from golden_tolerances import LOGIT_TOLERANCE  # noqa: E402
from reference import model_spec  # noqa: E402

BLOCK_SIZE = 16  # llmesh run's default


def settings(prompts, num_tokens):
    """(label, extra run flags, what the run must show)."""
    # Room for the largest request and one block more: the rest must wait or be preempted.
    need = max(len(p) + num_tokens for p in prompts)
    small_pool = (need + BLOCK_SIZE - 1) // BLOCK_SIZE * BLOCK_SIZE + BLOCK_SIZE
    out = []
    for budget in (16, 64, 512):
        out.append((f"budget {budget}, cache on", ["--max-batched-tokens", str(budget)],
                    "prefix_hits" if budget == 16 else None))
        out.append((f"budget {budget}, cache off", ["--max-batched-tokens", str(budget), "--no-prefix-cache"], None))
    out.append((f"budget 64, pool {small_pool} tokens", ["--max-batched-tokens", "64", "--kv-cache-tokens",
                                                          str(small_pool)], "preemptions"))
    return out


def run(llmesh, model_path, prompts, num_tokens, logits_path, extra):
    command = [llmesh, "run", "--model", model_path, "--max-tokens", str(num_tokens), "--temperature", "0",
               "--json", "--dump-logits", logits_path, "--kv-cache-dtype", "f32", *extra]
    for p in prompts:
        command += ["--prompt-ids", ",".join(map(str, p))]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"exit {result.returncode}: {' '.join(command[:8])} ...\n{result.stderr[-2000:]}")
    output = json.loads(result.stdout)
    if len(prompts) == 1:
        output = {"results": [output], "engine": output.get("engine", {})}
    logits = np.fromfile(logits_path, dtype="<f4")
    return output, logits


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llmesh", default=os.environ.get("LLMESH"), help="llmesh binary (default $LLMESH)")
    parser.add_argument("--models", required=True, help="models directory (generated when missing)")
    parser.add_argument("--only", help="comma-separated model names")
    parser.add_argument("--variants", default="f32-gguf", help="f32 variants to check (check_golden.py already holds safetensors = GGUF)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(model_spec.TINY_MODELS)
    ensure_models(args.models, names)

    failures = []
    num_checked = 0
    with tempfile.TemporaryDirectory() as scratch:
        logits_path = os.path.join(scratch, "logits.f32")
        for name in names:
            with open(os.path.join(args.models, f"{name}.reference.json")) as f:
                reference = json.load(f)
            for variant_key in args.variants.split(","):
                variant = reference["variants"].get(variant_key)
                if variant is None:
                    continue
                dtype = variant_key.split("-")[0]
                path = os.path.join(args.models, variant["path"])
                entries = variant["prompts"]
                ref = [np.fromfile(os.path.join(args.models, e["last_logits_file"]), dtype="<f4").astype(np.float64)
                       for e in entries]
                num_tokens = len(entries[0]["greedy_ids"])
                prompts = [e["ids"] for e in entries]

                alone = []
                for i, p in enumerate(prompts):
                    output, logits = run(args.llmesh, path, [p], num_tokens, logits_path, [])
                    alone.append(logits)

                order = list(range(len(prompts))) * 2  # each prompt twice
                for label, extra, must_show in settings(prompts, num_tokens):
                    where = f"{name} {variant_key} [{label}]"
                    try:
                        output, logits = run(args.llmesh, path, [prompts[i] for i in order], num_tokens,
                                             logits_path, extra)
                    except Exception as error:
                        failures.append(f"{where}: run failed: {error}")
                        continue
                    engine = output["engine"]
                    if must_show == "prefix_hits" and engine.get("prefix_hit_tokens", 0) <= 0:
                        failures.append(f"{where}: no prefix-cache hits, the shared-prefix path went untested")
                    if must_show == "preemptions" and engine.get("preemptions", 0) <= 0:
                        failures.append(f"{where}: no preemption, the recompute path went untested")
                    rows = logits.reshape(len(order), -1) if logits.size else logits
                    for slot, i in enumerate(order):
                        case = Case(name, variant_key, dtype, i, entries[i], path, ref[i])
                        result = output["results"][slot]
                        row = rows[slot] if len(rows) == len(order) else np.zeros(0, dtype=np.float32)
                        check_case(case, result, row)
                        num_checked += 1
                        if row.shape == alone[i].shape:
                            diff = float(np.max(np.abs(row.astype(np.float64) - alone[i])) / np.max(np.abs(ref[i])))
                            if not diff <= LOGIT_TOLERANCE[dtype]:
                                case.failures.append(f"batched vs alone logits differ by {diff:.2e}")
                        for message in case.failures:
                            failures.append(f"{where} p{i} copy {slot // len(prompts)}: {message}")
                        for note in case.notes:
                            print(f"note: {where} p{i}: {note}")
                    print(f"ran  {where}: {len(order)} requests, prefix hit tokens {engine.get('prefix_hit_tokens')}, "
                          f"preemptions {engine.get('preemptions')}", flush=True)

    for f in failures:
        print(f"FAIL: {f}")
    print(f"{num_checked - len(failures)}/{num_checked} served requests passed" if not failures
          else f"{len(failures)} failures over {num_checked} served requests")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
