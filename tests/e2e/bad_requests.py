"""The bad-request catalog: each case is sent to a real `llmesh serve` and must
get its status in the error shape of the endpoint's protocol (OpenAI's
{"error": {"message", "type", ...}}, Anthropic's {"type": "error", "error":
{"type", "message"}}), with the offending parameter named where the case says
so; afterwards the server must still serve.

    python3 bad_requests.py URL API_KEY CONTEXT_TOKENS
"""
import http.client
import json
import sys
import urllib.parse

URL, KEY, CONTEXT = sys.argv[1], sys.argv[2], int(sys.argv[3])
HOST = urllib.parse.urlparse(URL)

CHAT, COMPL, MSGS, COUNT, RESP = ("/v1/chat/completions", "/v1/completions", "/v1/messages",
                                  "/v1/messages/count_tokens", "/v1/responses")
USER = [{"role": "user", "content": "hi"}]
LONG = "word " * (CONTEXT + 100)  # more tokens than the context holds
BAD_UTF8 = b'{"messages":[{"role":"user","content":"caf\xc3\x28"}],"max_tokens":2}'


def chat(**fields):
    return {"messages": USER, "max_tokens": 2, **fields}


def msgs(**fields):
    return {"model": "m", "max_tokens": 8, "messages": USER, **fields}


def resp(**fields):
    return {"model": "m", "input": "hi", "max_output_tokens": 8, **fields}


# (name, path, body: dict | bytes | str, expected status, substring the message or param names ("" : any))
CASES = [
    # --- OpenAI chat
    ("chat: malformed JSON", CHAT, b'{"messages": [', 400, ""),
    ("chat: body is an array", CHAT, b"[1, 2]", 400, ""),
    ("chat: empty body", CHAT, b"", 400, ""),
    ("chat: messages missing", CHAT, {"max_tokens": 2}, 400, "messages"),
    ("chat: messages not an array", CHAT, {"messages": "hi"}, 400, "messages"),
    ("chat: messages empty", CHAT, {"messages": []}, 400, "messages"),
    ("chat: message not an object", CHAT, {"messages": ["hi"]}, 400, "messages"),
    ("chat: unknown role", CHAT, {"messages": [{"role": "wizard", "content": "x"}]}, 400, "role"),
    ("chat: role missing", CHAT, {"messages": [{"content": "x"}]}, 400, "role"),
    ("chat: content a number", CHAT, {"messages": [{"role": "user", "content": 5}]}, 400, "content"),
    ("chat: content part of unknown type", CHAT,
     {"messages": [{"role": "user", "content": [{"type": "hologram", "data": "x"}]}]}, 400, "hologram"),
    ("chat: image part", CHAT,
     {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}]}, 400, "image"),
    ("chat: max_tokens negative", CHAT, chat(max_tokens=-1), 400, "max_tokens"),
    ("chat: max_tokens a string", CHAT, chat(max_tokens="ten"), 400, "max_tokens"),
    ("chat: temperature a string", CHAT, chat(temperature="hot"), 400, "temperature"),
    ("chat: temperature negative", CHAT, chat(temperature=-1), 400, "temperature"),
    ("chat: top_p above 1", CHAT, chat(top_p=2), 400, "top_p"),
    ("chat: n above 1", CHAT, chat(n=3), 400, "n"),
    ("chat: stop a number", CHAT, chat(stop=7), 400, "stop"),
    ("chat: stream not a boolean", CHAT, chat(stream="yes"), 400, "stream"),
    ("chat: top_logprobs too many", CHAT, chat(logprobs=True, top_logprobs=50), 400, "top_logprobs"),
    ("chat: tools not an array", CHAT, chat(tools={"type": "function"}), 400, "tools"),
    ("chat: tool without a name", CHAT, chat(tools=[{"type": "function", "function": {"parameters": {}}}]), 400,
     "name"),
    ("chat: tool parameters not an object", CHAT,
     chat(tools=[{"type": "function", "function": {"name": "f", "parameters": "none"}}]), 400, "parameters"),
    ("chat: tool_choice unknown word", CHAT, chat(tool_choice="sometimes"), 400, "tool_choice"),
    ("chat: tool_choice names a missing tool", CHAT,
     chat(tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
          tool_choice={"type": "function", "function": {"name": "g"}}), 400, "tool_choice"),
    ("chat: response_format of unknown type", CHAT, chat(response_format={"type": "yaml"}), 400, "response_format"),
    ("chat: json_schema not an object", CHAT, chat(response_format={"type": "json_schema", "json_schema": "x"}),
     400, "json_schema"),
    ("chat: reasoning_effort unknown", CHAT, chat(reasoning_effort="extreme"), 400, "reasoning_effort"),
    ("chat: invalid UTF-8", CHAT, BAD_UTF8, 400, ""),
    ("chat: prompt longer than the context", CHAT, {"messages": [{"role": "user", "content": LONG}]}, 400, "context"),
    ("chat: assistant tool_calls not an array", CHAT,
     {"messages": USER + [{"role": "assistant", "tool_calls": {"id": "c"}}]}, 400, "tool_calls"),
    # --- OpenAI completions
    ("completions: prompt missing", COMPL, {"max_tokens": 2}, 400, "prompt"),
    ("completions: prompt an object", COMPL, {"prompt": {"text": "x"}}, 400, "prompt"),
    ("completions: token id out of range", COMPL, {"prompt": [1, 99999999]}, 400, "prompt"),
    ("completions: negative token id", COMPL, {"prompt": [-4]}, 400, "prompt"),
    ("completions: max_tokens a float", COMPL, {"prompt": "x", "max_tokens": 2.5}, 400, "max_tokens"),
    ("completions: prompt longer than the context", COMPL, {"prompt": LONG}, 400, "context"),
    ("completions: malformed JSON", COMPL, b'{"prompt": "x",}', 400, ""),
    ("completions: seed a string", COMPL, {"prompt": "x", "seed": "abc"}, 400, "seed"),
    # --- Anthropic messages
    ("messages: malformed JSON", MSGS, b'{"max_tokens": 8, ', 400, ""),
    ("messages: body is a string", MSGS, b'"hello"', 400, ""),
    ("messages: max_tokens missing", MSGS, {"model": "m", "messages": USER}, 400, "max_tokens"),
    ("messages: messages missing", MSGS, {"model": "m", "max_tokens": 8}, 400, "messages"),
    ("messages: messages empty", MSGS, msgs(messages=[]), 400, "messages"),
    ("messages: unknown role", MSGS, msgs(messages=[{"role": "robot", "content": "x"}]), 400, "role"),
    ("messages: content block of unknown type", MSGS,
     msgs(messages=[{"role": "user", "content": [{"type": "hologram"}]}]), 400, "hologram"),
    ("messages: image block", MSGS,
     msgs(messages=[{"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type":
                                                                               "image/png", "data": "AA=="}}]}]),
     400, "image"),
    ("messages: tool_result without tool_use_id", MSGS,
     msgs(messages=[{"role": "user", "content": [{"type": "tool_result", "content": "r"}]}]), 400, "tool_use_id"),
    ("messages: tool without input_schema", MSGS, msgs(tools=[{"name": "f"}]), 400, "input_schema"),
    ("messages: tool_choice tool without a name", MSGS,
     msgs(tools=[{"name": "f", "input_schema": {"type": "object"}}], tool_choice={"type": "tool"}), 400,
     "tool_choice"),
    ("messages: thinking budget a string", MSGS,
     msgs(max_tokens=4000, thinking={"type": "enabled", "budget_tokens": "lots"}), 400, "budget_tokens"),
    ("messages: thinking type unknown", MSGS, msgs(thinking={"type": "sometimes"}), 400, "thinking.type"),
    ("messages: temperature above 1", MSGS, msgs(temperature=1.5), 400, "temperature"),
    ("messages: stop_sequences not an array", MSGS, msgs(stop_sequences="END"), 400, "stop_sequences"),
    ("messages: metadata not an object", MSGS, msgs(metadata="x"), 400, "metadata"),
    ("messages: effort unknown", MSGS, msgs(output_config={"effort": "ludicrous"}), 400, "effort"),
    ("messages: cache_control ttl unknown", MSGS,
     msgs(system=[{"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "3d"}}]), 400, "ttl"),
    ("messages: invalid UTF-8", MSGS, b'{"max_tokens":8,"messages":[{"role":"user","content":"\xff\xfe"}]}', 400, ""),
    # Anthropic's own wording, which Claude Code reads to compact the conversation.
    ("messages: prompt longer than the context", MSGS, msgs(messages=[{"role": "user", "content": LONG}]), 400,
     "prompt is too long"),
    # --- Anthropic count_tokens
    ("count_tokens: messages missing", COUNT, {"model": "m"}, 400, "messages"),
    ("count_tokens: malformed JSON", COUNT, b"{", 400, ""),
    ("count_tokens: tools not an array", COUNT, {"model": "m", "messages": USER, "tools": "f"}, 400, "tools"),
    ("count_tokens: content a number", COUNT, {"model": "m", "messages": [{"role": "user", "content": 1}]}, 400,
     "content"),
    # --- OpenAI Responses
    ("responses: input missing", RESP, {"model": "m"}, 400, "input"),
    ("responses: input a number", RESP, resp(input=5), 400, "input"),
    ("responses: input_image part", RESP,
     resp(input=[{"role": "user", "content": [{"type": "input_image", "image_url": "data:,"}]}]), 400, "image"),
    ("responses: reasoning effort unknown", RESP, resp(reasoning={"effort": "extreme"}), 400, "effort"),
    ("responses: max_output_tokens negative", RESP, resp(max_output_tokens=-5), 400, "max_output_tokens"),
    ("responses: json_schema format without a schema", RESP,
     resp(text={"format": {"type": "json_schema", "name": "x"}}), 400, "schema"),
    ("responses: unknown previous_response_id", RESP, resp(previous_response_id="resp_nope"), 400,
     "previous_response_id"),
    ("responses: malformed JSON", RESP, b"{{", 400, ""),
]

# (name, method, path, headers, body, expected status, "openai" | "anthropic")
TRANSPORT_CASES = [
    ("no API key (chat)", "POST", CHAT, {}, json.dumps(chat()), 401, "openai"),
    ("wrong API key (messages)", "POST", MSGS, {"x-api-key": "nope"}, json.dumps(msgs()), 401, "anthropic"),
    ("body over --max-body-mib (chat)", "POST", CHAT, None, "x" * (2 << 20), 413, "openai"),
    ("body over --max-body-mib (messages)", "POST", MSGS, None, "x" * (2 << 20), 413, "anthropic"),
    ("headers over the limit", "GET", "/v1/models", {"x-api-key": KEY, "X-Pad": "p" * 9000}, None, 431, "openai"),
    ("no such route", "GET", "/v1/nothing", None, None, 404, "openai"),
    ("GET on a POST route", "GET", CHAT, None, None, 404, "openai"),
]


def send(method, path, body, headers):
    if HOST.scheme == "https":
        import ssl
        conn = http.client.HTTPSConnection(HOST.hostname, HOST.port, timeout=60, context=ssl._create_unverified_context())
    else:
        conn = http.client.HTTPConnection(HOST.hostname, HOST.port, timeout=60)
    data = body.encode() if isinstance(body, str) else body
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    raw = r.read()
    conn.close()
    return r.status, raw


def check_shape(raw, protocol, name):
    body = json.loads(raw)  # every error is JSON
    if protocol == "anthropic":
        assert body.get("type") == "error", f"{name}: not Anthropic's shape: {body}"
        assert isinstance(body["error"].get("type"), str) and body["error"].get("message"), f"{name}: {body}"
        return body["error"]["message"]
    err = body.get("error")
    assert isinstance(err, dict) and err.get("message") and "type" in err, f"{name}: not OpenAI's shape: {body}"
    return err["message"] + " " + str(err.get("param") or "")


failures = []
auth = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
for name, path, body, want, mentions in CASES:
    data = json.dumps(body) if isinstance(body, dict) else body
    status, raw = send("POST", path, data, auth)
    try:
        assert status == want, f"{name}: status {status}, want {want}: {raw[:300]!r}"
        text = check_shape(raw, "anthropic" if path.startswith(MSGS) else "openai", name)
        assert mentions.lower() in text.lower(), f"{name}: the error does not name '{mentions}': {text}"
    except (AssertionError, ValueError) as e:
        failures.append(str(e))
for name, method, path, headers, body, want, protocol in TRANSPORT_CASES:
    h = dict(auth) if headers is None else {"Content-Type": "application/json", **headers}
    status, raw = send(method, path, body, h)
    try:
        assert status == want, f"{name}: status {status}, want {want}: {raw[:300]!r}"
        check_shape(raw, protocol, name)
    except (AssertionError, ValueError) as e:
        failures.append(str(e))

# Still serving, in every protocol.
status, raw = send("POST", CHAT, json.dumps(chat()), auth)
assert status == 200, f"chat after the catalog: {status} {raw[:200]!r}"
status, raw = send("POST", MSGS, json.dumps(msgs()), auth)
assert status == 200, f"messages after the catalog: {status} {raw[:200]!r}"

total = len(CASES) + len(TRANSPORT_CASES)
for f in failures:
    print("FAIL", f)
print(f"{total - len(failures)}/{total} bad requests answered as expected")
sys.exit(1 if failures else 0)
