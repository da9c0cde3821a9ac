#!/usr/bin/env python3
"""Serving benchmarks of `llmesh serve` (issue 3): prefix-cache TTFT, multi-session
warm turns, decode throughput vs concurrency, prefill/decode interference.

Starts the server itself (one per --max-batched-tokens value) on a free loopback
port with the given model, drives it over HTTP with streaming chat requests, and
prints markdown tables. Standard library only.

  benchmarks/serve_bench.py --model models/qwen3-0.6b-q8_0.gguf [--threads 2] [--only ttft,sessions,decode,interference]
"""
import argparse
import http.client
import json
import os
import random
import re
import statistics
import sys
import threading
import time

from serve_process import ServerProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("alpha beta gamma delta river stone cloud paper signal vector kernel thread market garden "
         "window engine bridge forest copper silver orbit planet season memory").split()


class Server(ServerProcess):
    def chat(self, messages, max_tokens, ignore_eos=True):
        """Streams one chat completion; returns (ttft_s, [chunk times], usage)."""
        body = {"model": self.model_name, "messages": messages, "max_tokens": max_tokens, "stream": True, "temperature": 0,
                "ignore_eos": ignore_eos, "stream_options": {"include_usage": True}}
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        t0 = time.perf_counter()
        c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            raise RuntimeError(f"HTTP {r.status}: {r.read()[:300]}")
        times, usage = [], None
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            ev = json.loads(line[6:])
            if ev.get("usage"):
                usage = ev["usage"]
            for ch in ev.get("choices", []):
                d = ch.get("delta", {})
                if d.get("content") or d.get("reasoning_content") or d.get("tool_calls"):
                    times.append(time.perf_counter() - t0)
        return (times[0] if times else float("nan")), times, usage


def text_of_tokens(server, n_tokens, rng):
    """Text that tokenizes to about n_tokens (checked with /tokenize and trimmed)."""
    words = [rng.choice(WORDS) + str(rng.randrange(100)) for _ in range(n_tokens)]
    text = " ".join(words)
    _, body = server.post("/tokenize", {"prompt": text})
    ids = json.loads(body)["tokens"]
    _, body = server.post("/detokenize", {"tokens": ids[:n_tokens]})
    return json.loads(body)["prompt"]


def pct(values, p):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def bench_ttft(server, rng, lengths):
    print("\n### TTFT: cold history vs warm turn (same history + a new 50-token user turn)\n")
    print("| history tokens | cold TTFT s | warm TTFT s | warm/cold | cached tokens (warm) |")
    print("|---|---|---|---|---|")
    for n in lengths:
        server.post("/flush_cache", {})
        history = [{"role": "user", "content": text_of_tokens(server, n, rng)}]
        cold, _, u1 = server.chat(history, 1)
        turn = history + [{"role": "assistant", "content": "ok"},
                          {"role": "user", "content": text_of_tokens(server, 50, rng)}]
        warm, _, u2 = server.chat(turn, 1)
        cached = u2["prompt_tokens_details"]["cached_tokens"]
        print(f"| {u1['prompt_tokens']} | {cold:.2f} | {warm:.2f} | {warm / cold:.3f} | {cached} / {u2['prompt_tokens']} |")
        sys.stdout.flush()


def bench_sessions(server, rng, num_sessions=8, history_tokens=2000):
    print(f"\n### {num_sessions} sessions, ~{history_tokens}-token histories, then a +40-token turn each, concurrently\n")
    server.post("/flush_cache", {})
    histories = [[{"role": "user", "content": text_of_tokens(server, history_tokens, rng)}] for _ in range(num_sessions)]
    for h in histories:  # round 1, one at a time
        server.chat(h, 1)
    ttfts, cached = [], []

    def turn(h):
        t, _, u = server.chat(h + [{"role": "assistant", "content": "ok"},
                                   {"role": "user", "content": text_of_tokens(server, 40, rng)}], 1)
        ttfts.append(t)
        cached.append(u["prompt_tokens_details"]["cached_tokens"] / u["prompt_tokens"])

    threads = [threading.Thread(target=turn, args=(h,)) for h in histories]
    [t.start() for t in threads]
    [t.join() for t in threads]
    print(f"round-2 TTFT p50 {statistics.median(ttfts):.2f} s, max {max(ttfts):.2f} s; "
          f"cached share of prompt p50 {statistics.median(cached):.3f}")


def bench_decode(server, rng, concurrencies, prompt_tokens=128, output_tokens=64):
    print(f"\n### Aggregate decode throughput ({prompt_tokens}-token prompts, {output_tokens} output tokens)\n")
    print("| concurrency | aggregate decode tok/s | per-stream TPOT p50 ms |")
    print("|---|---|---|")
    for c in concurrencies:
        prompts = [[{"role": "user", "content": text_of_tokens(server, prompt_tokens, rng)}] for _ in range(c)]
        results = []

        def one(p):
            t, times, u = server.chat(p, output_tokens)
            results.append((times, u))

        threads = [threading.Thread(target=one, args=(p,)) for p in prompts]
        [t.start() for t in threads]
        [t.join() for t in threads]
        # Decode window: from the last stream's first token to the first stream's last token.
        start = max(r[0][0] for r in results)
        end = min(r[0][-1] for r in results)
        tokens_in_window = sum(sum(1 for x in r[0] if start <= x <= end) for r in results)
        agg = tokens_in_window / max(end - start, 1e-9)
        tpot = [(r[0][-1] - r[0][0]) / max(len(r[0]) - 1, 1) * 1000 for r in results]
        print(f"| {c} | {agg:.2f} | {statistics.median(tpot):.0f} |")
        sys.stdout.flush()


def bench_interference(binary, model, threads, budgets, rng_seed, inject_tokens=8000, output_tokens=256):
    print(f"\n### Prefill/decode interference: TPOT p95 of 4 x (1K -> {output_tokens}) streams, with and without a "
          f"{inject_tokens}-token prefill injected mid-run\n")
    print("| --max-batched-tokens | TPOT p95 alone ms | TPOT p95 with injection ms | max ITL with injection ms | injected TTFT s |")
    print("|---|---|---|---|---|")
    for budget in budgets:
        row = []
        for inject in (False, True):
            rng = random.Random(rng_seed)
            server = Server(binary, model, threads, ["--max-batched-tokens", str(budget)])
            try:
                prompts = [[{"role": "user", "content": text_of_tokens(server, 1000, rng)}] for _ in range(4)]
                long_prompt = [{"role": "user", "content": text_of_tokens(server, inject_tokens, rng)}]
                results, injected = [], []

                def one(p):
                    _, times, _ = server.chat(p, output_tokens)
                    results.append(times)

                ts = [threading.Thread(target=one, args=(p,)) for p in prompts]
                [t.start() for t in ts]
                if inject:
                    # Inject once every stream is decoding.
                    time.sleep(0.5)
                    while not re.search(r"^llmesh:num_requests_waiting(\{[^}]*\})? 0$",
                                        server.get("/metrics")[1].decode(), re.M):
                        time.sleep(0.2)
                    time.sleep(3)
                    t, _, _ = server.chat(long_prompt, 1)
                    injected.append(t)
                [t.join() for t in ts]
                tpots = [1000 * (r[-1] - r[0]) / max(len(r) - 1, 1) for r in results]
                itls = [1000 * (b - a) for r in results for a, b in zip(r, r[1:])]
                row.append((pct(tpots, 95), max(itls) if itls else float("nan"), injected[0] if injected else None))
            finally:
                server.stop()
        print(f"| {budget} | {row[0][0]:.0f} | {row[1][0]:.0f} | {row[1][1]:.0f} | {row[1][2]:.1f} |")
        sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llmesh", default=os.path.join(ROOT, "build", "llmesh"))
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", default="ttft,sessions,decode,interference")
    ap.add_argument("--lengths", default="1000,4000,8000")
    ap.add_argument("--budgets", default="256,512,2048")
    ap.add_argument("--inject-tokens", type=int, default=8000)
    ap.add_argument("--interference-output-tokens", type=int, default=256)
    args = ap.parse_args()
    only = set(args.only.split(","))
    rng = random.Random(1)
    print(f"model {args.model}, {args.threads} threads")
    if only & {"ttft", "sessions", "decode"}:
        server = Server(args.llmesh, args.model, args.threads, [])
        try:
            if "ttft" in only:
                bench_ttft(server, rng, [int(x) for x in args.lengths.split(",")])
            if "sessions" in only:
                bench_sessions(server, rng)
            if "decode" in only:
                bench_decode(server, rng, [1, 4, 8])
        finally:
            server.stop()
    if "interference" in only:
        bench_interference(args.llmesh, args.model, args.threads, [int(x) for x in args.budgets.split(",")], 2,
                           args.inject_tokens, args.interference_output_tokens)


if __name__ == "__main__":
    main()
