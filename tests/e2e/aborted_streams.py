"""1,000 streams cut off at random points must leak nothing: afterwards no KV
block is held by a request, nothing runs or waits, every HTTP worker is free,
and the server answers normally.

    python3 aborted_streams.py URL NUM_STREAMS CONCURRENCY
Streams go to all four generation endpoints. Each client closes its socket
after a random number of response bytes (0: right after sending the request,
before the server has even parsed it; sometimes mid-body of the request).
"""
import json
import random
import re
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request

URL, NUM, CONCURRENCY = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
HOST = urllib.parse.urlparse(URL)
rng = random.Random(1234)

USER = [{"role": "user", "content": "Tell me a long story about a lighthouse."}]
BODIES = [
    ("/v1/chat/completions", {"messages": USER, "max_tokens": 40, "stream": True, "ignore_eos": True}),
    ("/v1/messages", {"model": "m", "max_tokens": 40, "messages": USER, "stream": True}),
    ("/v1/responses", {"model": "m", "input": "Tell me a story.", "max_output_tokens": 40, "stream": True}),
    ("/v1/completions", {"prompt": "Once upon a time", "max_tokens": 40, "stream": True, "ignore_eos": True}),
]


def one(i, plan):
    path, body = BODIES[i % len(BODIES)]
    data = json.dumps(dict(body, messages=body["messages"] + [{"role": "user", "content": f"#{i}"}])
                      if "messages" in body else body).encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    s = socket.create_connection((HOST.hostname, HOST.port), timeout=60)
    try:
        mode, cut = plan
        if mode == "mid-request":
            s.sendall(head + data[: len(data) // 2])
            return
        s.sendall(head + data)
        got = 0
        while got < cut:
            chunk = s.recv(min(4096, cut - got))
            if not chunk:
                break
            got += len(chunk)
    finally:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST, like a killed client
        s.close()


def plan_for(i):
    r = rng.random()
    if r < 0.05:
        return ("mid-request", 0)
    if r < 0.15:
        return ("response", 0)  # closed before any response byte
    return ("response", rng.randint(1, 2500))


plans = [plan_for(i) for i in range(NUM)]
next_index = 0
lock = threading.Lock()
errors = []


def worker():
    global next_index
    while True:
        with lock:
            if next_index >= NUM:
                return
            i = next_index
            next_index += 1
        try:
            one(i, plans[i])
        except OSError as e:
            errors.append(f"stream {i}: {e}")


t0 = time.time()
threads = [threading.Thread(target=worker) for _ in range(CONCURRENCY)]
for t in threads: t.start()
for t in threads: t.join()
print(f"{NUM} streams aborted in {time.time() - t0:.1f} s ({len(errors)} client-side socket errors)")


def metrics():
    text = urllib.request.urlopen(URL + "/metrics", timeout=30).read().decode()
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"^(llmesh:\w+)\{[^}]*\} (\S+)$", text, re.M)}


# The engine notices each disconnect at its next token: give it a moment to settle.
deadline = time.time() + 60
while True:
    m = metrics()
    idle = (m["llmesh:kv_cache_blocks_used"] == 0 and m["llmesh:num_requests_running"] == 0 and
            m["llmesh:num_requests_waiting"] == 0 and m["llmesh:http_workers_busy"] <= 1)  # 1: this /metrics
    if idle or time.time() > deadline:
        break
    time.sleep(0.5)
print("after: blocks used {:.0f}, cached {:.0f} of {:.0f}; running {:.0f}, waiting {:.0f}; busy HTTP workers {:.0f}".format(
    m["llmesh:kv_cache_blocks_used"], m["llmesh:kv_cache_blocks_cached"], m["llmesh:kv_cache_blocks_total"],
    m["llmesh:num_requests_running"], m["llmesh:num_requests_waiting"], m["llmesh:http_workers_busy"]))
assert idle, "resources still held after the aborted streams"
assert m["llmesh:kv_cache_blocks_used"] + m["llmesh:kv_cache_blocks_cached"] <= m["llmesh:kv_cache_blocks_total"]
req = urllib.request.Request(URL + "/v1/chat/completions", data=json.dumps(
    {"messages": USER, "max_tokens": 4}).encode(), headers={"Content-Type": "application/json"})
answer = json.load(urllib.request.urlopen(req, timeout=60))
assert answer["choices"][0]["message"]["content"] is not None
print("serving normally afterwards")
