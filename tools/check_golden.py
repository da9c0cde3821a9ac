#!/usr/bin/env python3
"""Checks llmesh against the numpy reference on the tiny golden models.

  /usr/bin/python3 tools/check_golden.py --llmesh build/llmesh --models DIR [--only NAME]

Generates the models into DIR first when they are missing or were made by an
older generator. For every model x file variant x prompt it runs
  llmesh run --model PATH --prompt-ids 1,2,3 --max-tokens 32 --temperature 0 --json --dump-logits FILE
and checks: (1) last-prompt-position logits within the dtype's tolerance and
the same top-1; (2) the greedy continuation (all 32 tokens for f32 files, the
first 8 for others; a divergence at a reference near-tie is reported, not
failed); (3) GGUF-f32 and safetensors-f32 logits agree within 1e-5.
Weight variants run with an f32 KV cache (--kv-cache-dtype f32), so their
budgets are the weights' and kernels' own; the f32 GGUF then runs once more per
KV cache dtype (f16 the default, bf16, q8_0 where head_dim allows), against the
"kv-*" budgets.
Exit status: 0 all pass, 1 any failure, 77 when llmesh has no `run` command yet.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

TOOLS_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS_DIR)
import gen_models  # noqa: E402
from golden_tolerances import (KV_DTYPE_BLOCK, KV_DTYPES, LOGIT_TOLERANCE, MIN_GREEDY_MATCH_OTHER,  # noqa: E402
                               NEAR_TIE, ROUTER_NEAR_TIE, SAME_WEIGHTS_TOLERANCE)
from reference import model_spec  # noqa: E402

SKIP_EXIT_CODE = 77


def ensure_models(models_dir, names):
    version = gen_models.generator_version()
    stale = []
    for name in names:
        path = os.path.join(models_dir, f"{name}.reference.json")
        if not os.path.exists(path):
            stale.append(name)
            continue
        with open(path) as f:
            if json.load(f).get("generator_version") != version:
                stale.append(name)
    if stale:
        print(f"generating {', '.join(stale)} into {models_dir} ...", flush=True)
        subprocess.run([sys.executable, os.path.join(TOOLS_DIR, "gen_models.py"), "--out", models_dir,
                        "--only", ",".join(stale)], check=True)


def llmesh_has_run(llmesh):
    try:
        result = subprocess.run([llmesh, "run", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and "--prompt-ids" in result.stdout + result.stderr


def parse_json_output(stdout):
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        for line in reversed(stdout.splitlines()):
            if line.startswith("{"):
                return json.loads(line)
        raise


def run_llmesh(llmesh, model_path, prompt_ids, num_tokens, logits_path, kv_dtype="f32"):
    command = [llmesh, "run", "--model", model_path, "--prompt-ids", ",".join(map(str, prompt_ids)),
               "--max-tokens", str(num_tokens), "--temperature", "0", "--json", "--dump-logits", logits_path,
               "--kv-cache-dtype", kv_dtype]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        raise RuntimeError(f"exit {result.returncode}: {' '.join(command)}\n{result.stderr[-2000:]}")
    output = parse_json_output(result.stdout)
    logits = np.fromfile(logits_path, dtype="<f4")
    return output, logits


class Case:
    def __init__(self, model, variant_key, dtype, prompt_index, entry, model_path, ref_logits, kv_dtype="f32"):
        """dtype: the tolerance key (the weights' dtype, or "kv-<dtype>" for a KV cache dtype case)."""
        self.model, self.variant_key, self.dtype, self.kv_dtype = model, variant_key, dtype, kv_dtype
        self.prompt_index, self.entry, self.model_path = prompt_index, entry, model_path
        self.ref_logits = ref_logits
        self.failures, self.notes = [], []
        self.logits = None
        self.rel_err, self.matched = None, None

    @property
    def label(self):
        kv = f" kv {self.kv_dtype}" if self.kv_dtype != "f32" else ""
        return f"{self.model} {self.variant_key}{kv} p{self.prompt_index}"


def check_case(case, output, logits):
    ref = case.ref_logits
    scale = float(np.max(np.abs(ref)))
    greedy_ref, gaps = case.entry["greedy_ids"], case.entry["greedy_gaps"]
    near_tie = NEAR_TIE[case.dtype] * scale
    # MoE: first forward (0 = prompt) whose expert choice was a near-tie; from there on
    # the engine may route differently and its logits legitimately move a lot
    router_margins = case.entry.get("router_margins", [])
    first_routing_tie = next((k for k, m in enumerate(router_margins) if m < ROUTER_NEAR_TIE[case.dtype]),
                             len(greedy_ref))
    case.logits = logits
    if output.get("prompt_ids") not in (None, case.entry["ids"]):
        case.failures.append("prompt_ids echoed differ from the ones sent")
    if logits.shape != ref.shape:
        case.failures.append(f"dumped {logits.size} logits, expected {ref.size}")
        return
    case.rel_err = float(np.max(np.abs(logits.astype(np.float64) - ref)) / scale)
    if not case.rel_err <= LOGIT_TOLERANCE[case.dtype]:   # also catches NaN
        message = f"logits rel err {case.rel_err:.2e} > {LOGIT_TOLERANCE[case.dtype]:.0e}"
        if first_routing_tie == 0 and not np.isnan(case.rel_err):
            case.notes.append(f"{message} after a routing near-tie (margin {router_margins[0]:.3g})")
        else:
            case.failures.append(message)
    if int(np.argmax(logits)) != greedy_ref[0]:
        if gaps[0] < near_tie or first_routing_tie == 0:
            case.notes.append(f"top-1 differs at a near-tie (ref gap {gaps[0]:.3g})")
        else:
            case.failures.append(f"top-1 {int(np.argmax(logits))} != ref {greedy_ref[0]} (ref gap {gaps[0]:.3g})")

    ours = list(output.get("output_ids", []))
    matched = 0
    while matched < min(len(ours), len(greedy_ref)) and ours[matched] == greedy_ref[matched]:
        matched += 1
    case.matched = matched
    required = len(greedy_ref) if case.dtype == "f32" else MIN_GREEDY_MATCH_OTHER
    if matched >= required:
        if matched < len(greedy_ref):
            case.notes.append(f"greedy diverges at step {matched} (needs {required})")
        return
    if matched < len(ours) and gaps[matched] < near_tie:
        case.notes.append(f"greedy diverges at step {matched}, a near-tie (ref gap {gaps[matched]:.3g})")
    elif matched < len(ours) and first_routing_tie <= matched:
        case.notes.append(f"greedy diverges at step {matched}, after a routing near-tie at step {first_routing_tie}")
    elif matched == len(ours):
        case.failures.append(f"only {len(ours)} tokens generated, {required} must match")
    else:
        case.failures.append(f"greedy diverges at step {matched}: {ours[matched]} != {greedy_ref[matched]} "
                             f"(ref gap {gaps[matched]:.3g}, needs {required} matching)")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--llmesh", default=os.environ.get("LLMESH"), help="llmesh binary (default $LLMESH)")
    parser.add_argument("--models", required=True, help="models directory (generated when missing)")
    parser.add_argument("--only", help="comma-separated model names")
    parser.add_argument("--variants", help="comma-separated variant keys (default all)")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    names = args.only.split(",") if args.only else list(model_spec.GOLDEN_MODELS)
    ensure_models(args.models, names)
    if not args.llmesh or not llmesh_has_run(args.llmesh):
        print(f"SKIP: {args.llmesh or '$LLMESH'} has no `run --prompt-ids` command yet; "
              "reference models are in place", flush=True)
        return SKIP_EXIT_CODE

    cases = []
    for name in names:
        with open(os.path.join(args.models, f"{name}.reference.json")) as f:
            reference = json.load(f)
        for variant_key, variant in reference["variants"].items():
            if args.variants and variant_key not in args.variants.split(","):
                continue
            dtype = variant_key.split("-")[0]
            for index, entry in enumerate(variant["prompts"]):
                ref_logits = np.fromfile(os.path.join(args.models, entry["last_logits_file"]),
                                         dtype="<f4").astype(np.float64)
                path = os.path.join(args.models, variant["path"])
                cases.append(Case(name, variant_key, dtype, index, entry, path, ref_logits))
                if variant_key != "f32-gguf":
                    continue
                for kv_dtype in KV_DTYPES:
                    if model_spec.GOLDEN_MODELS[name].head_dim % KV_DTYPE_BLOCK[kv_dtype] == 0:
                        cases.append(Case(name, variant_key, f"kv-{kv_dtype}", index, entry, path, ref_logits,
                                          kv_dtype))

    with tempfile.TemporaryDirectory() as scratch:
        def run_case(case):
            logits_path = os.path.join(scratch, f"{case.model}.{case.variant_key}.{case.kv_dtype}.p{case.prompt_index}.f32")
            try:
                output, logits = run_llmesh(args.llmesh, case.model_path, case.entry["ids"],
                                            len(case.entry["greedy_ids"]), logits_path, case.kv_dtype)
                check_case(case, output, logits)
            except Exception as error:  # a crash or bad output is this case's failure
                case.failures.append(f"run failed: {error}")
            return case
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(run_case, cases))

    # (3) same weights, two containers
    by_key = {(c.model, c.variant_key, c.prompt_index): c for c in cases if c.kv_dtype == "f32"}
    for case in cases:
        if case.variant_key != "f32-gguf" or case.kv_dtype != "f32" or case.logits is None:
            continue
        other = by_key.get((case.model, "f32-safetensors", case.prompt_index))
        if other is None or other.logits is None or other.logits.shape != case.logits.shape:
            continue
        diff = float(np.max(np.abs(case.logits.astype(np.float64) - other.logits))
                     / np.max(np.abs(other.logits)))
        if not diff <= SAME_WEIGHTS_TOLERANCE:
            case.failures.append(f"GGUF-f32 vs safetensors-f32 logits differ by {diff:.2e} > {SAME_WEIGHTS_TOLERANCE:.0e}")

    print(f"{'case':<40} {'logit err':>10} {'tol':>7} {'greedy':>8}  result")
    num_failed = 0
    for case in cases:
        err = f"{case.rel_err:.2e}" if case.rel_err is not None else "-"
        greedy = f"{case.matched}/{len(case.entry['greedy_ids'])}" if case.matched is not None else "-"
        status = "FAIL" if case.failures else "ok"
        num_failed += bool(case.failures)
        detail = "; ".join(case.failures + case.notes)
        print(f"{case.label:<40} {err:>10} {LOGIT_TOLERANCE[case.dtype]:>7.0e} {greedy:>8}  {status}"
              + (f"  ({detail})" if detail else ""))
    print(f"{len(cases) - num_failed}/{len(cases)} cases passed")
    return 1 if num_failed else 0


if __name__ == "__main__":
    sys.exit(main())
