#!/usr/bin/env python3
"""An agent-shaped chat session, one turn per call, its history kept in a JSON file.

  agent_turns.py URL STATE TURN [--no-save] [--stream N] [--agent K]

Turn 0 starts the history (a long system prompt, like an agent's tools and
instructions); each turn appends a user message (a tool result of ~100 words),
sends the whole history with temperature 0 and appends the reply. Prints
{"content", "prompt_tokens", "cached_tokens"} of the turn. --no-save leaves
the history as it was (the same turn can be sent again, to another server);
--stream N streams a reply of up to N tokens and prints each chunk as it
comes (for a test that kills the server mid-stream; nothing is saved).
--agent K gives another agent's system prompt (no shared prefix).
"""
import json
import sys
import urllib.request

WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
         "upsilon phi chi psi omega file line build test patch diff error warning commit branch").split()


def text(seed, n):
    return " ".join(WORDS[(seed * 7 + i * 13 + i * i) % len(WORDS)] for i in range(n))


def main():
    url, state_path, turn = sys.argv[1], sys.argv[2], int(sys.argv[3])
    save = "--no-save" not in sys.argv
    stream_tokens = int(sys.argv[sys.argv.index("--stream") + 1]) if "--stream" in sys.argv else 0
    agent = int(sys.argv[sys.argv.index("--agent") + 1]) if "--agent" in sys.argv else 0
    if turn == 0:
        history = [{"role": "system", "content": f"You are coding agent {agent}. Tools and rules: " + text(1 + agent, 600)}]
    else:
        history = json.load(open(state_path))
    history.append({"role": "user", "content": f"Tool result {turn}: " + text(turn + 10, 100)})
    body = {"model": "tiny", "messages": history, "max_tokens": 24, "temperature": 0}
    if stream_tokens:
        body.update(stream=True, max_tokens=stream_tokens)
        req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
        for line in urllib.request.urlopen(req):
            print(line.decode().strip(), flush=True)
        return
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    r = json.load(urllib.request.urlopen(req))
    content = r["choices"][0]["message"].get("content") or ""
    history.append({"role": "assistant", "content": content})
    if save:
        json.dump(history, open(state_path, "w"))
    u = r["usage"]
    print(json.dumps({"content": content, "prompt_tokens": u["prompt_tokens"],
                      "cached_tokens": u.get("prompt_tokens_details", {}).get("cached_tokens", 0)}))


if __name__ == "__main__":
    main()
