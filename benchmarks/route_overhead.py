#!/usr/bin/env python3
"""What `llmesh route` adds to a request: TTFT and requests/s against one
`llmesh serve` (tiny model, max_tokens 1), directly and through the router.

  python3 benchmarks/route_overhead.py [--llmesh build/llmesh] [--model build/models/tiny-qwen3-q8_0.gguf]
        [--requests 300] [--concurrency 16] [--seconds 5]

Latency: sequential streamed chat requests (max_tokens 1) on kept-alive
connections; TTFT = time to the first data event carrying a token, p50/p90.
Throughput: C threads, each with its own kept-alive connection, for S seconds;
non-streamed chat (max_tokens 1) and POST /v1/messages/count_tokens (no
generation: the closest a real server gets to answering instantly).
Standard library only. Prints a table; numbers depend on the machine and on
what else runs on it (client, router and server share the cores).
"""
import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_process import ServerProcess, free_port  # noqa: E402

CHAT = json.dumps({"model": "tiny", "max_tokens": 1, "temperature": 0,
                   "messages": [{"role": "user", "content": "hi"}]})
CHAT_STREAM = json.dumps({"model": "tiny", "max_tokens": 1, "temperature": 0, "stream": True,
                          "messages": [{"role": "user", "content": "hi"}]})
COUNT = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "hi"}]})
HEADERS = {"Content-Type": "application/json", "anthropic-version": "2023-06-01"}


class Router:
    def __init__(self, binary, upstream_url):
        self.port = free_port()
        self.proc = subprocess.Popen([binary, "route", "--upstream", upstream_url, "--port", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("router did not start")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def ttft_ms(port, n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("POST", "/v1/chat/completions", CHAT_STREAM, HEADERS)
        r = conn.getresponse()
        first = None
        while True:
            line = r.readline()
            if not line:
                break
            if first is None and line.startswith(b"data:") and b'"content":"' in line and b'"content":""' not in line:
                first = time.perf_counter()
            if line.startswith(b"data: [DONE]"):
                break
        r.read()
        out.append(((first or time.perf_counter()) - t0) * 1000)
    conn.close()
    return out


def throughput(port, path, body, concurrency, seconds):
    counts, errors = [0] * concurrency, [0] * concurrency
    stop = time.perf_counter() + seconds

    def worker(i):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop:
            try:
                conn.request("POST", path, body, HEADERS)
                r = conn.getresponse()
                r.read()
                if r.status == 200:
                    counts[i] += 1
                else:
                    errors[i] += 1
            except OSError:
                errors[i] += 1
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts) / (time.perf_counter() - t0), sum(errors)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llmesh", default="build/llmesh")
    ap.add_argument("--model", default="build/models/tiny-qwen3-q8_0.gguf")
    ap.add_argument("--threads", type=int, default=1, help="serve compute threads")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=5)
    a = ap.parse_args()

    server = ServerProcess(a.llmesh, a.model, a.threads, ["--served-model-name", "tiny", "--max-running-requests", "64"])
    router = Router(a.llmesh, f"http://127.0.0.1:{server.port}")
    try:
        ttft_ms(server.port, 20)
        ttft_ms(router.port, 20)
        # Interleave direct and routed rounds so drifting load on the machine hits both alike.
        direct, routed = [], []
        for _ in range(5):
            direct += ttft_ms(server.port, a.requests // 5)
            routed += ttft_ms(router.port, a.requests // 5)
        print(f"TTFT, sequential streamed chat, max_tokens 1 ({len(direct)} requests each):")
        print(f"  {'':10} {'p50 ms':>8} {'p90 ms':>8} {'mean ms':>8}")
        for name, v in (("direct", direct), ("router", routed)):
            print(f"  {name:10} {pct(v, 50):8.3f} {pct(v, 90):8.3f} {statistics.mean(v):8.3f}")
        print(f"  added      {pct(routed, 50) - pct(direct, 50):8.3f} {pct(routed, 90) - pct(direct, 90):8.3f} "
              f"{statistics.mean(routed) - statistics.mean(direct):8.3f}")
        print(f"\nRequests/s, {a.concurrency} kept-alive connections, {a.seconds:g} s each:")
        for label, path, body in (("chat max_tokens 1", "/v1/chat/completions", CHAT),
                                  ("count_tokens", "/v1/messages/count_tokens", COUNT)):
            d, de = throughput(server.port, path, body, a.concurrency, a.seconds)
            r, re_ = throughput(router.port, path, body, a.concurrency, a.seconds)
            print(f"  {label:18} direct {d:8.0f}/s ({de} errors)   router {r:8.0f}/s ({re_} errors)   "
                  f"ratio {r / d if d else 0:.2f}")
    finally:
        router.stop()
        server.stop()


if __name__ == "__main__":
    main()
