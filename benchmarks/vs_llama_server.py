#!/usr/bin/env python3
"""Agent-turn TTFT: `llmesh serve` against llama.cpp's `llama-server` on the same GGUF file.

An agent resends its whole conversation every turn. For each round, both servers get the same
two requests (OpenAI chat, non-streaming, max_tokens 1, so the latency is the time to the first
token):
  * cold: a fresh --history-tokens conversation nobody has seen (the whole prompt is prefilled);
  * warm: that conversation + an assistant reply + a new user turn of --turn-tokens (only the new
    tokens should be prefilled: both servers keep the previous prompt's KV).
Servers run one at a time (each with --threads), rounds interleave A B A B; best of --rounds.
Prints a markdown table with each server's prompt/cached token counts as they report them.

  benchmarks/vs_llama_server.py --model models/qwen3-0.6b-q8_0.gguf [--rounds 2] [--threads 2]
      [--history-tokens 3800] [--turn-tokens 85] [--llama-cpp ../shared/peers/llama.cpp/bin]
Standard library only.
"""
import argparse
import http.client
import json
import os
import random
import sys
import time

from serve_process import ServerProcess, free_port

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORDS = ("alpha beta gamma delta river stone cloud paper signal vector kernel thread market garden "
         "window engine bridge forest copper silver orbit planet season memory").split()


def log(message):
    print(message, file=sys.stderr, flush=True)


class LlamaServer(ServerProcess):
    """llama-server on a free loopback port, one slot, prompt cache on (its default)."""

    def __init__(self, binary, model, threads, context, ready_timeout_s=600):
        self.port = free_port()
        self.start([binary, "-m", model, "--host", "127.0.0.1", "--port", str(self.port), "-t", str(threads),
                    "-c", str(context), "-np", "1"], ready_timeout_s)


def first_token_latency(server, messages):
    """Seconds for a 1-token completion, and (prompt tokens, cached tokens) as the server reports them."""
    body = {"model": server.model_name, "messages": messages, "max_tokens": 1, "temperature": 0}
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=3600)
    t0 = time.perf_counter()
    c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    seconds = time.perf_counter() - t0
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {data[:300]}")
    reply = json.loads(data)
    usage = reply.get("usage", {})
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached is None and "timings" in reply:  # llama-server: prompt_n is what it evaluated
        cached = usage.get("prompt_tokens", 0) - reply["timings"].get("prompt_n", 0)
    return seconds, usage.get("prompt_tokens"), cached


def words(n, rng):
    # About n tokens: a word and a number are ~3 tokens for Qwen-style tokenizers (digits split);
    # the servers report the exact count.
    return " ".join(rng.choice(WORDS) + str(rng.randrange(100)) for _ in range(max(1, n // 3)))


def conversation(history_tokens, turn_tokens, seed):
    rng = random.Random(seed)
    history = [{"role": "system", "content": "You are a coding agent. " + words(200, rng)}]
    for _ in range(max(0, history_tokens - 300) // 600):
        history.append({"role": "user", "content": words(300, rng)})
        history.append({"role": "assistant", "content": words(300, rng)})
    history.append({"role": "user", "content": words(100, rng)})
    warm = history + [{"role": "assistant", "content": words(turn_tokens // 2, rng)},
                      {"role": "user", "content": words(turn_tokens // 2, rng)}]
    return history, warm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--llmesh", default=os.path.join(ROOT, "build", "llmesh"))
    ap.add_argument("--llama-cpp", default=os.path.join(ROOT, "..", "shared", "peers", "llama.cpp", "bin"),
                    help="folder with llama-server")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--history-tokens", type=int, default=3800)
    ap.add_argument("--turn-tokens", type=int, default=85)
    args = ap.parse_args()

    llama_server = os.path.join(args.llama_cpp, "llama-server")
    if not os.path.exists(llama_server):
        sys.exit(f"no llama-server at {llama_server} (--llama-cpp)")
    context = 2 * args.history_tokens + 4096
    sides = {
        "llmesh": lambda: ServerProcess(args.llmesh, args.model, args.threads),
        "llama-server": lambda: LlamaServer(llama_server, args.model, args.threads, context),
    }
    best = {side: {} for side in sides}
    tokens = {side: {} for side in sides}
    for rnd in range(args.rounds):
        history, warm = conversation(args.history_tokens, args.turn_tokens, seed=1000 + rnd)
        for side, start in sides.items():
            server = start()
            try:
                for kind, messages in (("cold", history), ("warm", warm)):
                    seconds, prompt, cached = first_token_latency(server, messages)
                    log(f"round {rnd + 1} {side} {kind}: {seconds:.2f} s ({prompt} prompt tokens, {cached} cached)")
                    if seconds < best[side].get(kind, float("inf")):
                        best[side][kind] = seconds
                        tokens[side][kind] = (prompt, cached)
            finally:
                server.stop()

    print(f"Agent turn TTFT, {os.path.basename(args.model)}, {args.threads} threads, best of {args.rounds} "
          f"interleaved rounds (seconds to a 1-token completion)\n")
    print("| request | llmesh s | llama-server s | llama-server / llmesh | prompt / cached tokens (llmesh; llama-server) |")
    print("|---|---|---|---|---|")
    for kind in ("cold", "warm"):
        a, b = best["llmesh"][kind], best["llama-server"][kind]
        ta, tb = tokens["llmesh"][kind], tokens["llama-server"][kind]
        print(f"| {kind} | {a:.2f} | {b:.2f} | {b / a:.2f}x | {ta[0]} / {ta[1]}; {tb[0]} / {tb[1]} |")


if __name__ == "__main__":
    main()
