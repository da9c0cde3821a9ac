"""Checks of the console's JSON endpoints; run by test_console_api.sh.

Usage: console_checks.py SERVE_URL SERVE_KEY ROUTE_URL ROUTE_KEY
"""
import json
import sys
import time
import urllib.error
import urllib.request

serve, serve_key, route, route_key = sys.argv[1:5]


def call(base, path, key=None, body=None, headers=None):
    h = {"Content-Type": "application/json", **(headers or {})}
    if key:
        h["Authorization"] = "Bearer " + key
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data, h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def get_json(base, path, key):
    status, _, body = call(base, path, key)
    assert status == 200, (path, status, body[:300])
    return json.loads(body)


# The page is public (it carries no data); its data takes the key.
status, headers, body = call(serve, "/console")
assert status == 200 and b"<html" in body.lower() and "text/html" in headers["Content-Type"], (status, body[:200])
assert "default-src 'self'" in headers.get("Content-Security-Policy", ""), headers
for path in ["/console/api/nodes", "/console/api/models", "/console/api/requests", "/console/api/history"]:
    status, _, body = call(serve, path)
    assert status == 401 and json.loads(body)["error"]["type"] == "authentication_error", (path, status, body)
status, _, body = call(serve, "/console/api/requests/nope", serve_key)
assert status == 404 and "error" in json.loads(body), (status, body)
for bad in ["/console/..%2fCMakeLists.txt", "/console/.hidden", "/console/api/unknown"]:
    status, _, _ = call(serve, bad, serve_key)
    assert status == 404, (bad, status)

# A known workload: a cold and a warm chat turn (the warm one hits the cache),
# a stream, and an Anthropic message whose prompt takes several 64-token chunks.
system = "You are a careful coding agent. " * 30
chat = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": "List the files."}],
        "max_tokens": 6, "temperature": 0}
usages = []
for _ in range(2):
    status, _, body = call(serve, "/v1/chat/completions", serve_key, chat)
    assert status == 200, body
    r = json.loads(body)
    usages.append(("chat", False, r["usage"]["prompt_tokens"], r["usage"]["completion_tokens"]))
status, _, body = call(serve, "/v1/chat/completions", serve_key, {**chat, "stream": True,
                                                                    "stream_options": {"include_usage": True}})
assert status == 200
events = [json.loads(line[6:]) for line in body.decode().splitlines()
          if line.startswith("data: ") and line != "data: [DONE]"]
u = events[-1]["usage"]
usages.append(("chat", True, u["prompt_tokens"], u["completion_tokens"]))
status, _, body = call(serve, "/v1/messages", serve_key,
                       {"model": "tiny", "max_tokens": 5, "system": "Rules. " * 80,
                        "messages": [{"role": "user", "content": "hello"}]})
assert status == 200, body
m = json.loads(body)
usages.append(("messages", False, m["usage"]["input_tokens"] + m["usage"].get("cache_read_input_tokens", 0),
               m["usage"]["output_tokens"]))

ring = get_json(serve, "/console/api/requests", serve_key)
assert ring["capacity"] == 50 and ring["num_recorded"] == 4, ring
records = list(reversed(ring["requests"]))  # oldest first, like `usages`
for (protocol, stream, prompt, output), r in zip(usages, records):
    assert (r["protocol"], r["stream"], r["prompt_tokens"], r["output_tokens"]) == (protocol, stream, prompt, output), \
        (r, protocol, stream, prompt, output)
    assert r["outcome"] == "ok" and r["status"] == 200 and r["model"] == "tiny", r
    assert r["finish_reason"] in ("stop", "length"), r
    assert 0 < r["ttft_s"] <= r["duration_s"] and r["session"] and len(r["session"]) == 16, r
    assert "timeline" not in r
assert records[0]["cached_tokens"] == 0 and records[1]["cached_tokens"] > 0, records[:2]
assert len(get_json(serve, "/console/api/requests?limit=2", serve_key)["requests"]) == 2

for r in records:
    one = get_json(serve, "/console/api/requests/" + r["id"], serve_key)
    phases = [p["phase"] for p in one["timeline"]]
    assert phases[:2] == ["prepare", "queued"] and phases[-1] == "done" and "first_token" in phases, phases
    prefill = [p for p in one["timeline"] if p["phase"] == "prefill"]
    # Every prompt token not served from the cache ran in some chunk, none over the step budget.
    assert sum(p["tokens"] for p in prefill) == r["prompt_tokens"] - r["cached_tokens"], (r, prefill)
    assert all(p["tokens"] <= 64 for p in prefill), prefill
    assert prefill[0].get("cached_tokens", 0) == r["cached_tokens"], (r, prefill)
    decode = [p for p in one["timeline"] if p["phase"] == "decode"]
    assert sum(p["tokens"] for p in decode) == r["output_tokens"] - 1, (r, decode)
    starts = [p["start_s"] for p in one["timeline"]]
    assert starts == sorted(starts), one["timeline"]
assert len([p for p in get_json(serve, "/console/api/requests/" + records[3]["id"], serve_key)["timeline"]
            if p["phase"] == "prefill"]) >= 3  # ~250 prompt tokens in 64-token chunks

# The history: one sample a second; its rates add up to the tokens served.
deadline = time.time() + 15  # samples start once the model is loaded: wait for 3 after the workload
while True:
    time.sleep(1)
    history = get_json(serve, "/console/api/history", serve_key)
    if len(history["samples"]) >= 3 or time.time() > deadline:
        break
assert history["interval_s"] == 1 and history["window_s"] == 900, history
samples = history["samples"]
assert len(samples) >= 3, history
out = sum(s["output_tokens_per_s"] * history["interval_s"] for s in samples)
want = sum(u[3] for u in usages)
assert abs(out - want) <= 0.2 * want + 1, (out, want)
assert any(s["ttft_p50_s"] for s in samples[-2:]) and samples[-1]["kv_blocks"]["pool_total"] > 0, samples[-1]
assert any(s["cache_hit_rate"] for s in samples if s["cache_hit_rate"] is not None), samples
last = samples[-1]["t_ms"]
assert all(s["t_ms"] > samples[-2]["t_ms"] for s in
           get_json(serve, "/console/api/history?since=%d" % samples[-2]["t_ms"], serve_key)["samples"])

# The node: up, with weights, the pool and the host tier as bars.
node = get_json(serve, "/console/api/nodes", serve_key)["nodes"][0]
assert node["role"] == "serve" and node["state"] == "up" and node["kernels"], node
mem = node["memory"]
assert mem["weights_bytes"] > 0 and mem["rss_bytes"] > mem["weights_bytes"], mem
assert mem["kv_pool"]["total_bytes"] > 0 and mem["kv_pool"]["total_blocks"] > 0, mem
assert mem["host_tier"] is not None and mem["disk_tier"] is None, mem

# The models: what is loaded, and the library with the loaded one marked and a bad file explained.
models = get_json(serve, "/console/api/models", serve_key)
loaded = models["loaded"][0]
assert loaded["architecture"] == "qwen3" and loaded["quantization"] == "q8_0" and loaded["name"] == "tiny", loaded
assert loaded["parameters_total"] >= loaded["parameters_active"] > 0 and loaded["kv_bytes_per_token"] > 0, loaded
library = {m["name"]: m for m in models["library"]["models"]}
assert library["tiny"]["loaded"] and library["tiny"]["fits"] and library["tiny"]["architecture"] == "qwen3", library
assert "error" in library["truncated"] and not library["truncated"]["loaded"], library

# Through the router: its own node and the upstream's (memory from the upstream itself); requests name the upstream.
status, _, body = call(route, "/console/api/nodes")
assert status == 401, status
status, _, body = call(route, "/v1/chat/completions", route_key, {**chat, "model": "tiny"})
assert status == 200, body
nodes = get_json(route, "/console/api/nodes", route_key)["nodes"]
assert [n["role"] for n in nodes] == ["route", "upstream"], nodes
assert nodes[1]["name"] == "box1" and nodes[1]["state"] == "up", nodes[1]
assert nodes[1]["memory"]["kv_pool"]["total_blocks"] > 0, nodes[1]
routed = get_json(route, "/console/api/requests", route_key)["requests"]
assert len(routed) == 1 and routed[0]["upstream"] == "box1" and routed[0]["protocol"] == "chat", routed
assert routed[0]["prompt_tokens"] == usages[0][2] and routed[0]["output_tokens"] == usages[0][3], routed
assert get_json(route, "/console/api/models", route_key)["loaded"][0]["node"] == "box1"
status, _, body = call(route, "/console")
assert status == 200 and b"<html" in body.lower()
print("console endpoints: all checks passed")
