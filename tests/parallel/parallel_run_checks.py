"""Multi-rank `llmesh run` against the single-process run (see test_parallel_run.sh)."""
import json, os, subprocess, sys, tempfile

import numpy as np

llmesh, M = os.environ["LLMESH"], os.environ["M"]
MPIRUN = ["timeout", "-k", "5", "120", "mpirun", "--oversubscribe", "--bind-to", "none"]
failures = 0


def check(cond, what):
    global failures
    print(("ok:   " if cond else "FAIL: ") + what, flush=True)
    failures += 0 if cond else 1


# 8 prompts: two share a 32-token prefix (the prefix cache), lengths 5..40.
PROMPTS = [",".join(str(100 + 37 * i + j) for j in range(5 + 5 * i)) for i in range(6)]
SHARED = ",".join(str(500 + j) for j in range(32))
PROMPTS += [SHARED + ",7,8,9", SHARED + ",10,11"]


def run(model, ranks, *extra, expect_ok=True):
    """Greedy tokens of every prompt, the engine's counters and the prompts' last logits."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as logits:
        args = [llmesh, "run", "--model", model, "--max-tokens", "12", "--temperature", "0", "--ignore-eos",
                "--threads", "1", "--json", "--dump-logits", logits.name, *extra]
        for p in PROMPTS:
            args += ["--prompt-ids", p]
        cmd = (MPIRUN + ["-np", str(ranks)] if ranks > 1 else []) + args
        r = subprocess.run(cmd, capture_output=True, text=True)
        if not expect_ok:
            return r
        if r.returncode != 0:
            print(r.stdout[-2000:], r.stderr[-3000:])
            raise SystemExit(f"FAIL: {' '.join(cmd[-20:])} exited {r.returncode}")
        out = json.loads(r.stdout)
        return [x["output_ids"] for x in out["results"]], out["engine"], np.fromfile(logits.name, dtype=np.float32)


def compare(name, base, got, rel_tol):
    tokens, _, logits = got
    check(tokens == base[0], f"{name}: greedy tokens of all {len(PROMPTS)} prompts equal the single-process run")
    err = float(np.abs(logits - base[2]).max() / np.abs(base[2]).max())
    check(logits.shape == base[2].shape and err <= rel_tol, f"{name}: logits within {rel_tol:g} (max rel err {err:.2e})")


dense, moe = f"{M}/tiny-qwen3-f32.gguf", f"{M}/tiny-qwen3moe-f32.gguf"
glm = f"{M}/tiny-glm4moe-f32.gguf"  # shared experts (tensor-split with --tp, lane 0 with --ep), a dense layer 0
deepseek = f"{M}/tiny-deepseek3-f32.gguf"  # multi-head latent attention: the latent rows move between stages
gptoss = f"{M}/tiny-gptoss-f32.gguf"  # attention sinks split by head, expert biases split like their rows
# Small steps and a small pool: chunked prefill and preemption happen in every run.
engine = ["--max-batched-tokens", "16", "--kv-cache-tokens", "160", "--max-running-requests", "8"]
for model, layouts in [
    (dense, [("--tp 2", 2), ("--pp 2", 2), ("--tp 2 --pp 2", 4), ("--pp 2 --layer-split 1,1", 2)]),
    (moe, [("--tp 2", 2), ("--ep 2", 2), ("--ep 2 --expert-split 3,5", 2), ("--tp 2 --ep 2", 2),
           ("--ep 2 --pp 2", 4)]),
    (glm, [("--tp 2", 2), ("--ep 2", 2), ("--tp 2 --ep 2", 2), ("--ep 2 --pp 2", 4)]),
    (deepseek, [("--pp 2", 2), ("--ep 2", 2)]),
    (gptoss, [("--tp 2", 2), ("--ep 2", 2), ("--pp 2", 2)]),
]:
    base = run(model, 1, *engine)
    check(base[1]["preemptions"] > 0 and base[1]["prefix_hit_tokens"] >= 16,
          f"{os.path.basename(model)}: the single-process run preempts ({base[1]['preemptions']}) "
          f"and hits the prefix cache ({base[1]['prefix_hit_tokens']} tokens)")
    for flags, ranks in layouts:
        got = run(model, ranks, *engine, *flags.split())
        compare(f"{os.path.basename(model)} {flags}", base, got, 1e-4)
        check(got[1]["preemptions"] == base[1]["preemptions"] and got[1]["prefix_hit_tokens"] == base[1]["prefix_hit_tokens"],
              f"{os.path.basename(model)} {flags}: the same preemptions and prefix hits")

# Q8_0: a column slice of a quantized weight is whole blocks (o_proj, down_proj).
q8 = f"{M}/tiny-qwen3-q8_0.gguf"
base = run(q8, 1)
compare("q8_0 --tp 2", base, run(q8, 2, "--tp", "2"), 1e-4)
# Safetensors (HF names, another loader) with a Llama layout.
st = f"{M}/tiny-llama3"
base = run(st, 1)
compare("llama3 safetensors --tp 2 --pp 2", base, run(st, 4, "--tp", "2", "--pp", "2"), 1e-4)


def fails(ranks, flags, needle, model=dense):
    r = run(model, ranks, *flags, expect_ok=False)
    text = r.stderr + r.stdout
    check(r.returncode not in (0, 124, 137) and needle in text,
          f"{' '.join(flags) or 'no flags'} on {ranks} rank(s): exits {r.returncode} with '{needle}'"
          + ("" if needle in text else f" (got: {text[-400:]!r})"))




def comm_per_decode_token(model, ranks, flags, n=9):
    """Bytes rank 0 sent per decoded token: (a run of n tokens - a run of 1) / (n - 1)."""
    def sent(max_tokens):
        args = [llmesh, "run", "--model", model, "--prompt-ids", PROMPTS[3], "--max-tokens", str(max_tokens),
                "--ignore-eos", "--temperature", "0", "--threads", "1", "--json", *flags]
        r = subprocess.run(MPIRUN + ["-np", str(ranks)] + args, capture_output=True, text=True, check=True)
        return json.loads(r.stdout)["comm"]["rank0_bytes_sent"]
    return (sent(n) - sent(1)) / (n - 1)


def planned(model, flags):
    r = subprocess.run([llmesh, "inspect", "--model", model, "--plan", "--json", *flags], capture_output=True,
                       text=True, check=True)
    return json.loads(r.stdout)["plan"]["rank0_sent_bytes_per_token"]


# What `inspect --plan` predicts is what rank 0 sends (plus the step's own broadcast, < 256 B).
for model, flags in [(dense, ["--tp", "2"]), (dense, ["--pp", "2"]), (moe, ["--ep", "2"]), (glm, ["--ep", "2"]),
                     (glm, ["--tp", "2"]), (deepseek, ["--ep", "2"])]:
    got, want = comm_per_decode_token(model, 2, flags), planned(model, flags)
    check(want <= got <= want + 256,
          f"{os.path.basename(model)} {' '.join(flags)}: rank 0 sends {got:.0f} B per decode token, the plan says {want}")

fails(1, ["--tp", "2"], "needs 2 ranks")
fails(2, [], "has 2 ranks but no --tp")
fails(2, ["--tp", "4"], "needs 4 ranks")
fails(4, ["--tp", "4"], "must both divide by it")
fails(2, ["--ep", "2"], "the model is dense")
fails(2, ["--pp", "2", "--layer-split", "2,1"], "adds up to 3 layers")
fails(2, ["--tp", "2"], "multi-head latent attention", model=deepseek)
# --comm nccl without a GPU (or in a build without NCCL): one clear line from every rank, no hang.
if not os.path.exists("/dev/nvidia0"):
    r = run(dense, 2, "--tp", "2", "--comm", "nccl", expect_ok=False)
    text = r.stderr + r.stdout
    check(r.returncode not in (0, 124, 137) and ("sees no CUDA device" in text or "built without NCCL" in text),
          f"--comm nccl on a machine without a GPU: exits {r.returncode} with one clear line")
sys.exit(1 if failures else 0)
