#!/usr/bin/env python3
"""KV tiers benchmarks (issue 15), against the real `llmesh serve`:

  restore  a long session after a restart: TTFT with the disk tier vs a cold
           prefill of the same prompt (and vs warm in the pool), MB/s restored.
  swarm    N agent sessions whose histories grow each turn, with a pool that
           holds only part of the working set: prompt tokens served from cache
           per turn and TTFT p50/p95, with the tiers and without them.
  stall    decode TPOT p95 of running streams while prefills write blocks to
           the disk tier at full rate, vs the same run with the disk tier off.

  python3 benchmarks/kv_tiers.py --model models/qwen3-0.6b-q8_0.gguf [--only restore,swarm,stall]

Prints a markdown table per benchmark. Standard library only.
"""
import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import http.client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import ServerProcess  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def stream_completion(server, prompt_ids, max_tokens):
    """Streams /v1/completions; returns (ttft_s, [token arrival times], usage)."""
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=3600)
    body = {"model": server.model_name, "prompt": prompt_ids, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}
    t0 = time.perf_counter()
    c.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        raise RuntimeError(f"status {r.status}: {r.read()[:300]}")
    times, usage = [], None
    for line in r:
        line = line.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            usage = chunk["usage"]
        if chunk.get("choices") and chunk["choices"][0].get("text") is not None:
            times.append(time.perf_counter() - t0)
    return (times[0] if times else float("nan")), times, usage


def cached(usage):
    return (usage or {}).get("prompt_tokens_details", {}).get("cached_tokens", 0)


def cache_view(server):
    return json.loads(server.get("/v1/cache")[1])


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def random_ids(rng, n, vocab=100000):
    return [rng.randrange(1000, vocab) for _ in range(n)]


def restore(args):
    rng = random.Random(1)
    prompt = random_ids(rng, args.restore_tokens)
    kv_dir = tempfile.mkdtemp(prefix="llmesh-kv-bench-")
    common = ["--kv-disk-dir", kv_dir, "--kv-cache-tokens", str(args.restore_tokens + 1024), *args.serve_args]
    rows = []
    try:
        for rep in range(args.rounds):
            shutil.rmtree(kv_dir, ignore_errors=True)
            s = ServerProcess(args.llmesh, args.model, args.threads, common)
            log(f"restore round {rep + 1}: cold prefill of {len(prompt)} tokens ...")
            cold, _, u = stream_completion(s, prompt, 1)
            assert cached(u) == 0, u
            warm, _, u = stream_completion(s, prompt, 1)
            warm_cached = cached(u)
            s.stop(timeout_s=600)  # SIGTERM: the disk tier writes what is queued
            files = sum(os.path.getsize(os.path.join(kv_dir, f)) for f in os.listdir(kv_dir))
            s = ServerProcess(args.llmesh, args.model, args.threads, common)
            rec = cache_view(s)["disk"]["recovered"]
            restored, _, u = stream_completion(s, prompt, 1)
            view = cache_view(s)["restore"]
            s.stop()
            rows.append(dict(cold=cold, warm=warm, restored=restored, cached=cached(u), warm_cached=warm_cached,
                             mbps=view["mb_per_s"], restore_s=view["seconds"], mb=view["bytes"] / 1e6,
                             files_mb=files / 1e6, index_s=rec["seconds"], blocks=rec["blocks"]))
            log(f"  cold {cold:.2f} s, warm {warm:.3f} s, after restart {restored:.3f} s "
                f"({cached(u)} cached), load {view['bytes'] / 1e6:.0f} MB at {view['mb_per_s']:.0f} MB/s")
    finally:
        shutil.rmtree(kv_dir, ignore_errors=True)
    best = min(rows, key=lambda r: r["restored"])
    print(f"\n### Restore vs recompute: {args.restore_tokens}-token prompt, {args.threads} threads, best of {len(rows)}\n")
    print("| cold prefill TTFT | warm (pool) TTFT | after restart (disk tier) TTFT | speed-up vs cold | "
          "cached tokens | K/V restored | restore rate | index rebuild |")
    print("|---|---|---|---|---|---|---|---|")
    cold = min(r["cold"] for r in rows)
    print(f"| {cold:.2f} s | {min(r['warm'] for r in rows):.3f} s | {best['restored']:.3f} s | "
          f"{cold / best['restored']:.0f}x | {best['cached']} / {len(prompt)} | {best['mb']:.0f} MB | "
          f"{best['mbps']:.0f} MB/s | {best['blocks']} blocks in {best['index_s'] * 1000:.0f} ms |")


def swarm_run(args, tiers):
    """One swarm run; returns per-turn lists of (ttft, cached, prompt)."""
    rng = random.Random(7)
    sessions = [random_ids(rng, args.swarm_history) for _ in range(args.swarm_sessions)]
    working_set = args.swarm_sessions * (args.swarm_history + args.swarm_turns * args.swarm_growth_max)
    pool = working_set // 2
    extra = ["--kv-cache-tokens", str(pool), *args.serve_args]
    kv_dir = None
    if tiers:
        kv_dir = tempfile.mkdtemp(prefix="llmesh-kv-swarm-")
        extra += ["--kv-disk-dir", kv_dir, "--kv-host-gib", str(args.swarm_host_gib)]
    else:
        extra += ["--kv-host-gib", "0"]
    s = ServerProcess(args.llmesh, args.model, args.threads, extra)
    turns = []
    try:
        for turn in range(args.swarm_turns):
            rows = []
            for i, history in enumerate(sessions):
                reusable = len(history) if turn > 0 else 0  # what the previous turn sent
                if turn > 0:  # the tool result of the previous turn arrives
                    history += random_ids(rng, rng.randint(args.swarm_growth_min, args.swarm_growth_max))
                ttft, _, u = stream_completion(s, history, args.swarm_output)
                rows.append((ttft, cached(u), u["prompt_tokens"], reusable))
            turns.append(rows)
            log(f"  {'tiers' if tiers else 'pool only'} turn {turn + 1}: cached "
                f"{sum(r[1] for r in rows) / sum(r[2] for r in rows):.0%}, TTFT p50 {pct([r[0] for r in rows], .5):.2f} s")
        view = cache_view(s)
    finally:
        s.stop(timeout_s=600)
        if kv_dir:
            shutil.rmtree(kv_dir, ignore_errors=True)
    return turns, pool, working_set, view


def swarm(args):
    print(f"\n### Swarm larger than the pool: {args.swarm_sessions} sessions, {args.swarm_history}-token histories "
          f"+{args.swarm_growth_min}-{args.swarm_growth_max} per turn, {args.threads} threads\n")
    results = {}
    for tiers in (True, False):
        results[tiers] = swarm_run(args, tiers)
    _, pool, working_set, _ = results[True]
    print(f"Pool {pool} tokens for a working set of up to {working_set} tokens.\n")
    print("Cached: prompt tokens served from cache (all tiers) / prompt tokens; reuse: cached / what the "
          "session's previous turn sent (the most any cache can serve).\n")
    print("| turn | cached (reuse), with tiers | cached (reuse), pool only | TTFT p50 / p95 with tiers | "
          "TTFT p50 / p95 pool only |")
    print("|---|---|---|---|---|")
    for t in range(args.swarm_turns):
        cells = []
        for tiers in (True, False):
            rows = results[tiers][0][t]
            reusable = sum(r[3] for r in rows)
            reuse = f"{sum(r[1] for r in rows) / reusable:.1%}" if reusable else "-"
            cells.append((sum(r[1] for r in rows) / sum(r[2] for r in rows), reuse, [r[0] for r in rows]))
        print(f"| {t + 1} | {cells[0][0]:.1%} ({cells[0][1]}) | {cells[1][0]:.1%} ({cells[1][1]}) | "
              f"{pct(cells[0][2], .5):.2f} / {pct(cells[0][2], .95):.2f} s | "
              f"{pct(cells[1][2], .5):.2f} / {pct(cells[1][2], .95):.2f} s |")
    v = results[True][3]
    print(f"\nWith tiers: {v['host']['promotions']} blocks promoted from host RAM, {v['disk']['promotions']} from disk; "
          f"{v['pool']['evictions']} pool evictions, {v['host']['evictions']} host-tier evictions.")


def stall_run(args, disk):
    rng = random.Random(3)
    extra = ["--kv-cache-tokens", str(16 * 1024), *args.serve_args]
    kv_dir = tempfile.mkdtemp(prefix="llmesh-kv-stall-") if disk else None
    extra += ["--kv-disk-dir", kv_dir] if disk else ["--kv-host-gib", "0"]
    s = ServerProcess(args.llmesh, args.model, args.threads, extra)
    import threading
    gaps = []
    try:
        def decode():
            _, times, _ = stream_completion(s, random_ids(rng, 64), args.stall_decode_tokens)
            gaps.extend(b - a for a, b in zip(times[1:], times[2:]))
        streams = [threading.Thread(target=decode) for _ in range(2)]
        for t in streams:
            t.start()
        time.sleep(1)
        while any(t.is_alive() for t in streams):  # prefills, one after another: their blocks go to disk
            stream_completion(s, random_ids(rng, args.stall_prefill_tokens), 1)
        for t in streams:
            t.join()
        view = cache_view(s)
    finally:
        s.stop(timeout_s=600)
        if kv_dir:
            shutil.rmtree(kv_dir, ignore_errors=True)
    return pct(gaps, 0.95), statistics.median(gaps), view["disk"]


def stall(args):
    print(f"\n### No stall: TPOT of 2 decoding streams while {args.stall_prefill_tokens}-token prefills run back to back, "
          f"{args.threads} threads\n")
    print("| round | TPOT p95 disk tier on | TPOT p95 off | ratio | p50 on / off | blocks written | dropped writes |")
    print("|---|---|---|---|---|---|---|")
    for rep in range(args.rounds):
        on = stall_run(args, True)
        off = stall_run(args, False)
        print(f"| {rep + 1} | {on[0] * 1000:.1f} ms | {off[0] * 1000:.1f} ms | {on[0] / off[0]:.2f} | "
              f"{on[1] * 1000:.1f} / {off[1] * 1000:.1f} ms | {on[2]['writes']} | {on[2]['dropped_writes']} |")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--llmesh", default=os.path.join(ROOT, "build", "llmesh"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--only", default="restore,swarm,stall")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--restore-tokens", type=int, default=16384)
    p.add_argument("--swarm-sessions", type=int, default=8)
    p.add_argument("--swarm-turns", type=int, default=3)
    p.add_argument("--swarm-history", type=int, default=4096)
    p.add_argument("--swarm-growth-min", type=int, default=1024)
    p.add_argument("--swarm-growth-max", type=int, default=2048)
    p.add_argument("--swarm-output", type=int, default=16)
    p.add_argument("--swarm-host-gib", type=float, default=4)
    p.add_argument("--stall-decode-tokens", type=int, default=128)
    p.add_argument("--stall-prefill-tokens", type=int, default=512)
    p.add_argument("--serve-args", nargs="*", default=[], help="extra `llmesh serve` flags")
    args = p.parse_args()
    for name in args.only.split(","):
        {"restore": restore, "swarm": swarm, "stall": stall}[name](args)


if __name__ == "__main__":
    main()
