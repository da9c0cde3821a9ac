#!/usr/bin/env python3
"""Cost of JSON-schema constrained decoding: decode tok/s of `llmesh serve` with
and without a response_format json_schema, measured interleaved (same minutes,
same server, same prompt) so machine load affects both alike.

Per round it runs one unconstrained request (ignore_eos, max_tokens tokens) and
one per schema: "story" (one long string: the mask of a string state, cached
after the first walk) and "records" (an array of objects: keys, numbers and
short strings, so the matcher changes state at almost every token). Decode
tok/s = tokens after the first / time from the first to the last token. The
EOS a completed grammar adds without a forward pass is not counted.

  /usr/bin/python3 benchmarks/constrained_decode.py --model models/qwen3-0.6b-q8_0.gguf [--threads 2] [--rounds 5]

With a tiny model (build/models/tiny-qwen3-q8_0.gguf, ~2.5 ms per step) the
"added ms/token" column isolates the constraint's own cost per token.
Standard library only.
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import time

from serve_process import ServerProcess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCHEMAS = {
    "story": {"type": "object", "properties": {"title": {"type": "string"}, "story": {"type": "string"}},
              "required": ["title", "story"]},
    "records": {"type": "array", "minItems": 3, "items": {
        "type": "object", "required": ["id", "name", "age", "city", "active"],
        "properties": {"id": {"type": "integer"}, "name": {"type": "string", "maxLength": 12},
                       "age": {"type": "integer", "minimum": 0}, "city": {"enum": ["Paris", "Tokyo", "Lima", "Oslo"]},
                       "active": {"type": "boolean"}}}},
}
PROMPTS = {
    None: "Write a long story about a lighthouse keeper.",
    "story": "Write a long story about a lighthouse keeper, as JSON with a title and the story.",
    "records": "List many people as JSON records with id, name, age, city and whether they are active.",
}


class Server(ServerProcess):
    def decode_rate(self, schema_name, max_tokens):
        """One streamed request; returns (decode tok/s, end-to-end tok/s, tokens, content)."""
        body = {"messages": [{"role": "user", "content": PROMPTS[schema_name]}], "max_tokens": max_tokens,
                "stream": True, "temperature": 0, "enable_thinking": False, "stream_options": {"include_usage": True}}
        if schema_name is None:
            body["ignore_eos"] = True
        else:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": schema_name, "schema": SCHEMAS[schema_name]}}
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1200)
        start = time.perf_counter()
        c.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:
            raise RuntimeError(f"HTTP {r.status}: {r.read()[:300]}")
        first = last = None
        usage, finish, content = None, None, []
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            now = time.perf_counter()
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices", []):
                text = choice["delta"].get("content")
                if text:
                    content.append(text)
                    first = first or now
                    last = now
                finish = choice.get("finish_reason") or finish
        tokens = usage["completion_tokens"] - (1 if finish == "stop" else 0)  # the EOS a complete grammar adds
        if schema_name is not None:
            json.loads("".join(content))  # the constrained output must parse
        end = time.perf_counter()
        return (tokens - 1) / (last - first), tokens / (end - start), tokens, "".join(content)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "models/qwen3-0.6b-q8_0.gguf"))
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/llmesh"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=160)
    args = ap.parse_args()

    server = Server(args.binary, args.model, args.threads)
    kinds = [None] + list(SCHEMAS)
    rates = {k: [] for k in kinds}
    e2e_rates = {k: [] for k in kinds}
    try:
        server.decode_rate(None, 8)  # warm up
        for rnd in range(args.rounds):
            for kind in kinds:
                rate, e2e_rate, tokens, content = server.decode_rate(kind, args.max_tokens)
                rates[kind].append(rate)
                e2e_rates[kind].append(e2e_rate)
                label = kind or "unconstrained"
                print(f"round {rnd + 1}: {label:13s} {rate:6.2f} tok/s decode, {e2e_rate:6.2f} end to end, {tokens} tokens"
                      + (f"  {content[:60]!r}…" if kind else ""), file=sys.stderr, flush=True)
    finally:
        server.stop()
    base = statistics.median(rates[None])
    e2e_base = statistics.median(e2e_rates[None])
    print(f"model {os.path.basename(args.model)}, {args.threads} threads, {args.rounds} interleaved rounds, "
          f"max_tokens {args.max_tokens}")
    print("| request | decode tok/s (median) | ratio | end-to-end tok/s (median) | ratio | added ms/token |")
    print("| --- | --- | --- | --- | --- | --- |")
    for kind in kinds:
        m = statistics.median(rates[kind])
        e = statistics.median(e2e_rates[kind])
        added_ms = 1000 / m - 1000 / base
        print(f"| {kind or 'unconstrained'} | {m:.2f} | {m / base:.3f} | {e:.2f} | {e / e2e_base:.3f} | {added_ms:+.2f} |")


if __name__ == "__main__":
    main()
