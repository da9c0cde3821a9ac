#!/usr/bin/env python3
"""Checks of `llmesh route` in front of real `llmesh serve` upstreams (stdlib only).

  route_checks.py sessions ROUTER_URL          3-turn sessions stay on one upstream; later turns hit the cache
  route_checks.py spread ROUTER_URL N          N concurrent sessions stay within the load bound
  route_checks.py place ROUTER_URL N OUT       turn 1 of N sessions; writes {session: upstream} to OUT
  route_checks.py failover ROUTER_URL IN DEAD  turn 2 after upstream DEAD was killed: only its sessions move
  route_checks.py midstream ROUTER_URL PIDS_JSON [OUT]   an upstream killed mid-stream ends the stream with an error
  route_checks.py cache_aware ROUTER_URL         requests sharing a long prefix follow it (policy cache_aware)
  route_checks.py disconnect ROUTER_URL URLS_JSON  a client that leaves mid-stream cancels the upstream generation
Each exits non-zero with a message on failure.
"""
import json
import math
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request

SYSTEM = ("You are a careful assistant for a team of engineers. Answer briefly, cite the file you mean, "
          "and never invent an API. ") * 8


def post(url, path, body, headers=None, timeout=60):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def get_json(url, path):
    with urllib.request.urlopen(url + path, timeout=10) as r:
        return json.loads(r.read())


def stream_chat(url, body, headers=None, timeout=60):
    """Streams a chat completion; returns (status, upstream, text, usage, events, error)."""
    body = {**body, "stream": True, "stream_options": {"include_usage": True}}
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **(headers or {})})
    text, usage, events, error = "", None, [], None
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            upstream = r.headers.get("x-llmesh-upstream")
            for raw in r:
                line = raw.decode().strip()
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    events.append("[DONE]")
                    continue
                ev = json.loads(payload)
                events.append(ev)
                if "error" in ev:
                    error = ev["error"]
                if ev.get("usage"):
                    usage = ev["usage"]
                for c in ev.get("choices", []):
                    text += c.get("delta", {}).get("content") or ""
            return r.status, upstream, text, usage, events, error
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("x-llmesh-upstream"), "", None, events, e.read().decode()


def die(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def messages_turn(session, turn, answers):
    """Anthropic body for turn `turn` (1-based) of a Claude Code-like session."""
    msgs = []
    for t in range(1, turn + 1):
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"Question {t} of session {session}?"}]})
        if t < turn:
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": answers[t - 1]}]})
    msgs[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": "tiny", "max_tokens": 8, "stream": False,
            "system": [{"type": "text", "text": f"x-anthropic-billing-header: cc_version=2.1.0; cch={session};"},
                       {"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            "metadata": {"user_id": f"user_abc_account_def_session_{session}"},
            "messages": msgs}


def check_sessions(url):
    # Anthropic Messages with Claude Code's metadata.user_id: 3 turns on one upstream, turns 2-3 cached.
    for session in ["alpha", "beta", "gamma"]:
        answers, upstreams = [], []
        for turn in (1, 2, 3):
            status, headers, body = post(url, "/v1/messages", messages_turn(session, turn, answers),
                                         {"anthropic-version": "2023-06-01", "x-api-key": "x"})
            if status != 200:
                die(f"session {session} turn {turn}: HTTP {status}: {body[:300]}")
            msg = json.loads(body)
            answers.append("".join(b.get("text", "") for b in msg["content"]) or "ok")
            upstreams.append(headers.get("x-llmesh-upstream") or headers.get("X-Llmesh-Upstream"))
            cached = msg["usage"]["cache_read_input_tokens"]
            if turn > 1 and cached <= 0:
                die(f"session {session} turn {turn} on {upstreams[-1]}: no cached tokens ({msg['usage']})")
        if len(set(upstreams)) != 1:
            die(f"session {session} moved between upstreams: {upstreams}")
        print(f"messages session {session}: turns 1-3 on {upstreams[0]}")
    # OpenAI chat, streamed, no session id at all: the prompt-prefix key keeps it in place.
    for session in ["delta", "epsilon"]:
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Hello from {session}"}]
        upstreams = []
        for turn in (1, 2, 3):
            status, upstream, text, usage, _, error = stream_chat(url, {"model": "tiny", "messages": msgs,
                                                                        "max_tokens": 6, "temperature": 0})
            if status != 200 or error:
                die(f"chat session {session} turn {turn}: HTTP {status} {error}")
            upstreams.append(upstream)
            cached = (usage or {}).get("prompt_tokens_details", {}).get("cached_tokens", 0)
            if turn > 1 and cached <= 0:
                die(f"chat session {session} turn {turn}: no cached tokens ({usage})")
            msgs += [{"role": "assistant", "content": text or "ok"}, {"role": "user", "content": f"And turn {turn + 1}?"}]
        if len(set(upstreams)) != 1:
            die(f"chat session {session} moved: {upstreams}")
        print(f"chat session {session} (prompt-prefix key): turns 1-3 on {upstreams[0]}, cached tokens on 2-3")


def check_spread(url, n):
    results = [None] * n

    def one(i):
        results[i] = stream_chat(url, {"model": "tiny", "max_tokens": 48, "ignore_eos": True, "temperature": 0,
                                       "messages": [{"role": "user", "content": f"session {i}: count slowly"}]},
                                 headers={"x-session-id": f"spread-{i}"})

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [(i, r[0], r[5]) for i, r in enumerate(results) if r[0] != 200 or r[5]]
    if bad:
        die(f"failed requests: {bad[:5]}")
    state = get_json(url, "/v1/route")
    ups = state["upstreams"]
    bound = math.ceil(state["load_factor"] * n / len(ups))
    counts = {u["name"]: 0 for u in ups}
    for r in results:
        counts[r[1]] += 1
    peaks = {u["name"]: u["max_in_flight"] for u in ups}
    print(f"{n} concurrent sessions: placed {counts}, peak in flight {peaks}, bound {bound}")
    for name, peak in peaks.items():
        if peak > bound:
            die(f"upstream {name} held {peak} requests at once, over the bound {bound}")
    for name, c in counts.items():
        if c == 0:
            die(f"upstream {name} got no session: {counts}")
        if c > bound:
            die(f"upstream {name} got {c} of {n} concurrent sessions, over the bound {bound}")


def chat_turn(url, session, turn):
    return stream_chat(url, {"model": "tiny", "max_tokens": 4, "temperature": 0,
                             "messages": [{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": f"turn {turn}"}]},
                       headers={"x-session-id": session})


def place(url, n, out):
    placed = {}
    for i in range(n):
        status, upstream, _, _, _, error = chat_turn(url, f"s{i}", 1)
        if status != 200 or error:
            die(f"turn 1 of s{i}: HTTP {status} {error}")
        placed[f"s{i}"] = upstream
    json.dump(placed, open(out, "w"))
    counts = {}
    for u in placed.values():
        counts[u] = counts.get(u, 0) + 1
    print(f"turn 1 placed {n} sessions: {counts}")


def failover(url, placed_file, dead):
    placed = json.load(open(placed_file))
    results = {}

    def one(s):
        results[s] = chat_turn(url, s, 2)

    threads = [threading.Thread(target=one, args=(s,)) for s in placed]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    moved = 0
    for s, before in placed.items():
        status, after, _, _, _, error = results[s]
        if status != 200 or error:
            die(f"session {s} (was on {before}) failed after {dead} died: HTTP {status} {error}")
        if before == dead:
            if after == dead:
                die(f"session {s} still went to the dead upstream")
            moved += 1
        elif after != before:
            die(f"session {s} moved from {before} to {after} although {before} is alive")
    state = get_json(url, "/v1/route")
    health = {u["name"]: u["healthy"] for u in state["upstreams"]}
    if health[dead]:
        die(f"{dead} still shown healthy: {health}")
    retries = sum(u["retries"] for u in state["upstreams"])
    print(f"after killing {dead}: {moved} of its sessions moved, the other {len(placed) - moved} stayed; "
          f"{retries} request(s) retried before their first byte; health {health}")
    if moved == 0:
        die(f"no session was on {dead}; the test proves nothing")


def midstream(url, pid_by_name_file):
    """Starts a long stream, kills its upstream after a few chunks: the stream must end in an error, not retry."""
    pids = json.load(open(pid_by_name_file))
    body = {"model": "tiny", "max_tokens": 4000, "ignore_eos": True, "temperature": 0, "stream": True,
            "messages": [{"role": "user", "content": "a very long answer please"}]}
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "x-session-id": "midstream"})
    chunks, error, done = 0, None, False
    with urllib.request.urlopen(req, timeout=60) as r:
        upstream = r.headers.get("x-llmesh-upstream")
        try:
            for raw in r:
                line = raw.decode().strip()
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    done = True
                    continue
                ev = json.loads(payload)
                if "error" in ev:
                    error = ev["error"]
                    continue
                chunks += 1
                if chunks == 5:
                    os.kill(pids[upstream], signal.SIGKILL)
        except Exception as e:  # a cut connection is acceptable too; a completed stream is not
            error = error or str(e)
    if done or error is None:
        die(f"the stream from killed upstream {upstream} did not end in an error (chunks {chunks}, done {done})")
    print(f"stream on {upstream} killed after 5 chunks: {chunks} chunks, then error {error!r}; not retried")
    return upstream


def cache_aware(url):
    """Requests sharing a long prompt prefix follow it to one upstream (no session ids at all)."""
    long_system = SYSTEM * 4
    upstreams = []
    for i in range(4):
        status, upstream, _, usage, _, error = stream_chat(url, {
            "model": "tiny", "max_tokens": 2, "temperature": 0,
            "messages": [{"role": "system", "content": long_system}, {"role": "user", "content": f"question {i}"}]})
        if status != 200 or error:
            die(f"cache_aware request {i}: HTTP {status} {error}")
        upstreams.append(upstream)
        cached = (usage or {}).get("prompt_tokens_details", {}).get("cached_tokens", 0)
        if i > 0 and cached <= 0:
            die(f"cache_aware request {i} on {upstream}: no cached tokens ({usage})")
    if len(set(upstreams)) != 1:
        die(f"requests sharing a prefix went to {upstreams}")
    decisions = get_json(url, "/v1/route")["decisions"]
    if decisions.get("prefix_match", 0) < 3:
        die(f"expected 3 prefix_match decisions: {decisions}")
    print(f"cache_aware: 4 requests sharing a {len(long_system)}-byte system prompt all on {upstreams[0]}: {decisions}")


def metric(base, name):
    with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + "{") or line.startswith(name + " "):
                return float(line.rsplit(" ", 1)[1])
    die(f"metric {name} missing at {base}")


def disconnect(url, urls_file):
    """Reads 3 chunks of a 4000-token stream, closes the socket: the upstream must stop generating."""
    import http.client
    urls = json.load(open(urls_file))
    host, port = url.split("//")[1].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    body = {"model": "tiny", "max_tokens": 4000, "ignore_eos": True, "temperature": 0, "stream": True,
            "messages": [{"role": "user", "content": "go on forever"}]}
    conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json",
                                                                    "x-session-id": "leaver"})
    r = conn.getresponse()
    upstream = r.getheader("x-llmesh-upstream")
    base = urls[upstream]
    before = metric(base, "llmesh:generation_tokens_total")
    seen = 0
    while seen < 3:
        if r.fp.readline().startswith(b"data:"):
            seen += 1
    conn.sock.close()  # the client leaves without reading the rest
    conn.close()
    t0 = time.time()
    while time.time() - t0 < 20:
        if metric(base, "llmesh:num_requests_running") == 0:
            break
        time.sleep(0.1)
    else:
        die(f"upstream {upstream} still generates 20 s after the client left")
    generated = metric(base, "llmesh:generation_tokens_total") - before
    if generated >= 4000:
        die(f"upstream {upstream} generated all {generated} tokens for a client that had left")
    print(f"client left after 3 chunks: {upstream} stopped after {generated:.0f} of 4000 tokens, "
          f"{time.time() - t0:.2f} s later")


if __name__ == "__main__":
    cmd, url = sys.argv[1], sys.argv[2]
    if cmd == "sessions":
        check_sessions(url)
    elif cmd == "spread":
        check_spread(url, int(sys.argv[3]))
    elif cmd == "place":
        place(url, int(sys.argv[3]), sys.argv[4])
    elif cmd == "failover":
        failover(url, sys.argv[3], sys.argv[4])
    elif cmd == "midstream":
        print(midstream(url, sys.argv[3]), file=open(sys.argv[4], "w") if len(sys.argv) > 4 else sys.stdout)
    elif cmd == "cache_aware":
        cache_aware(url)
    elif cmd == "disconnect":
        disconnect(url, sys.argv[3])
    else:
        die(f"unknown check {cmd}")
