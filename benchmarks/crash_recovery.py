#!/usr/bin/env python3
"""`kill -9` during active streams, then restart (issue 19): how much of each
session's cache the next turn finds, with the disk tier and without it.

  python3 benchmarks/crash_recovery.py --model build/models/tiny-qwen3-q8_0.gguf [--sessions 8]

Per run: N Anthropic sessions build a history (turns of ~history/turns tokens
each), then all N stream their next turn at once; mid-stream the server gets
SIGKILL. It is restarted on the same --kv-disk-dir and each session resends
the turn that was cut off. Reported per mode: the requests that failed at the
kill (expected: all N streams), and for the resent turn the prompt tokens, the
cached tokens, reuse = cached / the last prompt that completed before the kill
(p50 and worst), and TTFT p50. Standard library only.
"""
import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import ServerProcess  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud".split()


def text(n_words, seed):
    return " ".join(WORDS[(seed * 7 + i * 13) % len(WORDS)] + str((seed + i) % 97) for i in range(n_words))


def message_request(port, messages, max_tokens, stream, timeout=600):
    """Sends a /v1/messages request; returns (status, ttft_s, usage, text) or raises OSError mid-stream."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    body = {"model": "m", "max_tokens": max_tokens, "system": "You are a coding agent. " + text(200, 0),
            "messages": messages, "stream": stream, "loop_guard": False}
    t0 = time.perf_counter()
    c.request("POST", "/v1/messages", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    if not stream:
        data = json.loads(r.read())
        usage = data.get("usage", {})
        return r.status, time.perf_counter() - t0, usage, "".join(b.get("text", "") for b in data.get("content", []))
    ttft, usage, out = None, {}, ""
    for line in r:
        line = line.decode().strip()
        if not line.startswith("data: "):
            continue
        ev = json.loads(line[6:])
        if ev["type"] == "message_start":
            usage = dict(ev["message"]["usage"])
        if ev["type"] == "message_delta":  # the final usage: the cache split is known after prefill
            usage.update(ev.get("usage", {}))
        if ev["type"] == "content_block_delta" and ttft is None:
            ttft = time.perf_counter() - t0
        if ev["type"] == "content_block_delta" and "text" in ev["delta"]:
            out += ev["delta"]["text"]
    return r.status, ttft, usage, out


def cached_of(usage):
    return usage.get("cache_read_input_tokens", 0)


def prompt_of(usage):
    return usage.get("input_tokens", 0) + usage.get("cache_read_input_tokens", 0) + usage.get(
        "cache_creation_input_tokens", 0)


def run(args, disk_dir):
    extra = ["--kv-host-gib", "0"] + (["--kv-disk-dir", disk_dir] if disk_dir else [])
    server = ServerProcess(args.llmesh, args.model, args.threads, extra)
    sessions = [[] for _ in range(args.sessions)]
    last_prompt = [0] * args.sessions
    words_per_turn = max(1, args.history_words // args.turns)
    try:
        for turn in range(args.turns):
            for s, messages in enumerate(sessions):
                messages.append({"role": "user", "content": f"Session {s} turn {turn}: " + text(words_per_turn, s * 100 + turn)})
                status, _, usage, out = message_request(server.port, messages, 8, False)
                assert status == 200, status
                messages.append({"role": "assistant", "content": out or "ok"})
                last_prompt[s] = prompt_of(usage)
        for s, messages in enumerate(sessions):
            messages.append({"role": "user", "content": f"Session {s} next: " + text(words_per_turn, s * 100 + 99)})
        # N streams at once; SIGKILL once every one of them is generating.
        generating = [False] * args.sessions
        failures = []

        def stream(s):
            try:
                c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
                body = {"model": "m", "max_tokens": 4000, "system": "You are a coding agent. " + text(200, 0),
                        "messages": sessions[s], "stream": True, "loop_guard": False}
                c.request("POST", "/v1/messages", json.dumps(body), {"Content-Type": "application/json"})
                r = c.getresponse()
                finished = False
                for line in r:
                    if line.startswith(b"event: content_block_delta"):
                        generating[s] = True
                    finished = finished or line.startswith(b"event: message_stop")
                failures.append(("ended" if finished else "cut", s))  # EOF before message_stop: cut by the kill  # the stream ended before the kill: not what we measure
            except (OSError, http.client.HTTPException) as e:
                failures.append((type(e).__name__, s))

        threads = [threading.Thread(target=stream, args=(s,)) for s in range(args.sessions)]
        for t in threads:
            t.start()
        deadline = time.time() + 120
        while not all(generating) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        server.proc.kill()  # SIGKILL: no drain, no flush
        server.proc.wait()
        for t in threads:
            t.join(30)
        server = ServerProcess(args.llmesh, args.model, args.threads, extra)
        reuse, ttfts, prompts, cached = [], [], [], []
        for s, messages in enumerate(sessions):
            status, ttft, usage, _ = message_request(server.port, messages, 8, True)
            assert status == 200, status
            reuse.append(min(cached_of(usage), last_prompt[s]) / last_prompt[s])
            ttfts.append(ttft)
            prompts.append(prompt_of(usage))
            cached.append(cached_of(usage))
        return {"killed_streams": sum(1 for kind, _ in failures if kind != "ended"), "sessions": args.sessions,
                "prompt": statistics.mean(prompts), "cached": statistics.mean(cached),
                "reuse_p50": statistics.median(reuse), "reuse_worst": min(reuse),
                "ttft_p50_ms": statistics.median(ttfts) * 1000}
    finally:
        server.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--llmesh", default=os.path.join(ROOT, "build", "llmesh"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--history-words", type=int, default=1500, help="words of history per session before the kill")
    args = p.parse_args()
    rows = []
    for mode in ("disk tier", "no disk tier"):
        disk = tempfile.mkdtemp(prefix="llmesh-crash-") if mode == "disk tier" else None
        try:
            rows.append((mode, run(args, disk)))
        finally:
            if disk:
                shutil.rmtree(disk, ignore_errors=True)
    print(f"| mode | streams cut by kill -9 | prompt tokens (mean) | cached after restart (mean) | "
          f"reuse p50 | reuse worst | TTFT p50 ms |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for mode, r in rows:
        print(f"| {mode} | {r['killed_streams']}/{r['sessions']} | {r['prompt']:.0f} | {r['cached']:.0f} | "
              f"{r['reuse_p50']:.3f} | {r['reuse_worst']:.3f} | {r['ttft_p50_ms']:.0f} |")


if __name__ == "__main__":
    main()
