#!/usr/bin/env bash
# GET /v1/sessions: the server keys each request to its agent session the way
# the router does (x-session-id, Claude Code's metadata.user_id, Responses
# prompt_cache_key, else the prompt's opening) and shows per-session turns,
# cached tokens and the last turn's reuse; ids are hashes, never the keys.
source "$(dirname "$0")/serve_common.sh"
start_server A
U=$A_URL
H=(-H 'Content-Type: application/json')
/usr/bin/python3 - "$U" <<'PY' || fail "sessions view"
import json, sys, urllib.request
url = sys.argv[1]
def post(path, body, headers={}):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json", **headers})
    return json.load(urllib.request.urlopen(req, timeout=60))
system = "You are a coding agent. " + "Rules of the repository. " * 60
user_id = "user_abc_account_1234_session_5f1c9d2e-0000-4000-8000-000000000001"
messages = [{"role": "user", "content": "Read the file."}]
for turn in range(3):
    r = post("/v1/messages", {"model": "m", "max_tokens": 8, "system": system, "messages": messages,
                              "metadata": {"user_id": user_id}})
    messages += [{"role": "assistant", "content": "".join(b.get("text", "") for b in r["content"]) or "ok"},
                 {"role": "user", "content": f"Tool output {turn}: " + "data " * 40}]
chat = [{"role": "user", "content": "hello " * 50}]
for turn in range(2):
    r = post("/v1/chat/completions", {"messages": chat, "max_tokens": 4}, {"x-session-id": "agent-7"})
    chat += [{"role": "assistant", "content": r["choices"][0]["message"]["content"] or "ok"},
             {"role": "user", "content": "more"}]
post("/v1/responses", {"input": "hi", "max_output_tokens": 4, "prompt_cache_key": "conv-42"})
view = json.load(urllib.request.urlopen(url + "/v1/sessions"))
by_source = {s["source"]: s for s in view["sessions"]}
assert view["num_sessions"] == 3, view
assert set(by_source) == {"anthropic_user_id", "header", "prompt_cache_key"}, view
claude = by_source["anthropic_user_id"]
assert claude["num_requests"] == 3 and claude["num_failed"] == 0, claude
assert claude["last_turn_reuse"] > 0.9, claude  # the previous turn's prompt came from the cache
assert claude["total_cached_tokens"] > 0 and claude["last_cached_tokens"] <= claude["last_prompt_tokens"], claude
assert by_source["header"]["num_requests"] == 2 and by_source["prompt_cache_key"]["num_requests"] == 1, view
text = json.dumps(view)
assert "5f1c9d2e" not in text and "agent-7" not in text and "conv-42" not in text, "a session key leaked"
assert view["sessions"][0]["source"] == "prompt_cache_key", "most recently seen first"
print("sessions:", [(s["source"], s["num_requests"], s["last_turn_reuse"]) for s in view["sessions"]])
PY
echo "PASS test_serve_sessions"
