// Drives a running `llmesh serve` with the official @anthropic-ai/sdk npm package.
//   node anthropic_sdk_test.mjs   (env: LLMESH_URL, NODE_MODULES; LLMESH_API_KEY when the server needs one; LLMESH_AUTH_URL: a server with --api-key secret)
// Each check throws on failure; the process exits non-zero.
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const BASE = process.env.LLMESH_URL;
const { default: Anthropic } = await import(pathToFileURL(`${process.env.NODE_MODULES}/@anthropic-ai/sdk/index.mjs`).href);
const client = new Anthropic({ baseURL: BASE, apiKey: process.env.LLMESH_API_KEY ?? "anything", maxRetries: 0, timeout: 120_000 });
const MODEL = "claude-sonnet-5-5";  // any name is accepted and echoed
// LLMESH_BRIDGED=1: the server is `llmesh route` bridging onto an OpenAI chat
// upstream, which cannot say which stop sequence matched, and rewrites bodies
// (the upstream's body limit is not the client's): those two checks are skipped.
const BRIDGED = process.env.LLMESH_BRIDGED === "1";
const user = (content) => [{ role: "user", content }];

// Checks the event-order rules the SDK relies on; returns the problem or "".
export function eventOrderProblem(events) {
  const types = events.map((e) => e.type).filter((t) => t !== "ping");
  if (types[0] !== "message_start") return `first event is ${types[0]}`;
  if (types.at(-1) !== "message_stop") return `last event is ${types.at(-1)}`;
  let open = -1, last = -1, openType = "", signed = false, delta = false;
  for (const e of events.slice(1, -1)) {
    if (e.type === "ping") continue;
    if (delta) return `${e.type} after message_delta`;
    if (e.type === "content_block_start") {
      if (open >= 0) return "block opened while another is open";
      if (e.index !== last + 1) return `index ${e.index} after ${last}`;
      open = e.index; openType = e.content_block.type; signed = false;
    } else if (e.type === "content_block_delta") {
      if (e.index !== open) return `delta for block ${e.index} while ${open} is open`;
      const want = { thinking: "thinking_delta", text: "text_delta", tool_use: "input_json_delta" }[openType];
      if (signed) return "delta after signature_delta";
      if (e.delta.type === "signature_delta") {
        if (openType !== "thinking") return "signature_delta outside a thinking block";
        signed = true;
      } else if (e.delta.type !== want) return `${e.delta.type} in a ${openType} block`;
    } else if (e.type === "content_block_stop") {
      if (e.index !== open) return `stop for ${e.index} while ${open} is open`;
      if (openType === "thinking" && !signed) return "thinking block without signature_delta";
      last = open; open = -1;
    } else if (e.type === "message_delta") {
      if (open >= 0) return "message_delta with a block open";
      if (typeof e.usage?.output_tokens !== "number") return "message_delta without usage.output_tokens";
      delta = true;
    } else return `unexpected event ${e.type}`;
  }
  return delta ? "" : "no message_delta";
}

// Streams through the SDK; returns {events, message}.
async function streamed(params) {
  const stream = client.messages.stream({ model: MODEL, ...params });
  const events = [];
  for await (const event of stream) events.push(event);
  return { events, message: await stream.finalMessage() };
}

// Raw SSE from fetch: [{event, data}] (checks the framing the SDK needs).
async function rawEvents(path, body, headers = {}) {
  const r = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": process.env.LLMESH_API_KEY ?? "x", "anthropic-version": "2023-06-01", ...headers },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200, await r.clone().text());
  assert.match(r.headers.get("content-type"), /text\/event-stream/);
  const text = await r.text();
  return text.split("\n\n").filter((s) => s.trim()).map((chunk) => {
    const lines = chunk.split("\n");
    assert.ok(lines[0].startsWith("event: "), `SSE message without an event line: ${chunk.slice(0, 200)}`);
    assert.ok(lines[1].startsWith("data: "), `SSE message without data: ${chunk.slice(0, 200)}`);
    return { event: lines[0].slice(7), data: JSON.parse(lines[1].slice(6)) };
  });
}

async function post(path, body, headers = {}) {
  const r = await fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": process.env.LLMESH_API_KEY ?? "x", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch { /* not JSON */ }
  return { status: r.status, json, text };
}

function assertAnthropicError(res, status, type) {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json?.type, "error", res.text);
  assert.equal(res.json.error.type, type, res.text);
  assert.equal(typeof res.json.error.message, "string");
  assert.ok(res.json.error.message.length > 0);
}

const usageSum = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check("non-streaming message: shape, model name echoed, exact usage", async () => {
  const m = await client.messages.create({ model: MODEL, max_tokens: 8, temperature: 0, messages: user("Tell me about llamas.") });
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.equal(m.model, MODEL);
  assert.match(m.id, /^msg_/);
  assert.ok(Array.isArray(m.content));
  assert.ok(["max_tokens", "end_turn"].includes(m.stop_reason), m.stop_reason);
  if (m.stop_reason === "max_tokens") assert.equal(m.usage.output_tokens, 8);
  const counted = await client.messages.countTokens({ model: MODEL, messages: user("Tell me about llamas.") });
  assert.equal(usageSum(m.usage), counted.input_tokens);
  assert.equal(m.usage.cache_creation_input_tokens, 0);
});

check("streaming equals non-streaming (greedy) and follows the event order", async () => {
  const params = { max_tokens: 16, temperature: 0, messages: user("Write a poem about the sea.") };
  const a = await client.messages.create({ model: MODEL, ...params });
  const { events, message } = await streamed(params);
  assert.equal(eventOrderProblem(events), "");
  assert.deepEqual(message.content, a.content);
  assert.equal(message.stop_reason, a.stop_reason);
  assert.equal(message.usage.output_tokens, a.usage.output_tokens);
  assert.equal(usageSum(message.usage), usageSum(a.usage));
  // The second identical prompt is served from the prefix cache.
  assert.ok(message.usage.cache_read_input_tokens > 0, JSON.stringify(message.usage));
});

check("raw SSE: every message has an event line equal to data.type; ?beta=true routes", async () => {
  const events = await rawEvents("/v1/messages?beta=true",
    { model: MODEL, max_tokens: 6, stream: true, messages: user("hello") },
    { "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14" });
  for (const { event, data } of events) assert.equal(event, data.type);
  assert.equal(eventOrderProblem(events.map((e) => e.data)), "");
  const start = events[0].data;
  assert.deepEqual(start.message.content, []);
  assert.equal(start.message.stop_reason, null);
  for (const k of ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]) {
    assert.equal(typeof start.message.usage[k], "number", k);
  }
  const counted = await post("/v1/messages/count_tokens?beta=true", { model: MODEL, messages: user("hello") });
  assert.equal(counted.status, 200, counted.text);
  const delta = events.find((e) => e.event === "message_delta").data;
  assert.equal(usageSum(delta.usage), counted.json.input_tokens);
});

check("max_tokens far beyond the context is clamped, not rejected", async () => {
  const stream = client.messages.stream({ model: MODEL, max_tokens: 64000, messages: user("Go on forever.") });
  let n = 0;
  for await (const event of stream) {
    if (++n >= 4) break;  // the client leaves; the server cancels the request
  }
  assert.ok(n >= 4);
  const m = await client.messages.create({ model: MODEL, max_tokens: 32000, messages: user("hi"),
                                           stop_sequences: ["e", "a", "o", " "] });
  assert.ok(["stop_sequence", "end_turn", "max_tokens"].includes(m.stop_reason));
});

check("stop_sequences end the text and are reported", async () => {
  const params = { model: MODEL, max_tokens: 24, temperature: 0, messages: user("Count to twenty.") };
  const full = await client.messages.create(params);
  const text = full.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  const chars = Array.from(text);  // code points: a stop string must be whole characters
  assert.ok(chars.length >= 6, `too little text to cut: ${JSON.stringify(text)}`);
  const middle = Math.floor(chars.length / 2);
  const stop = chars.slice(middle, middle + 3).join("");
  const cut = await client.messages.create({ ...params, stop_sequences: [stop] });
  if (!BRIDGED) {
    assert.equal(cut.stop_reason, "stop_sequence");
    assert.equal(cut.stop_sequence, stop);
  }
  const cutText = cut.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  const before = text.slice(0, text.indexOf(stop));
  // Whitespace with no text after it opens no text block.
  assert.ok(cutText === before || cutText === before.trimEnd(), JSON.stringify({ cutText, before }));
  assert.ok(!cutText.includes(stop));
});

check("thinking: the switch reaches the template; a thinking block streams with a signature", async () => {
  const msgs = user("Why is the sky blue?");
  const off = await client.messages.countTokens({ model: MODEL, messages: msgs });
  const on = await client.messages.countTokens({ model: MODEL, messages: msgs, thinking: { type: "enabled", budget_tokens: 2048 } });
  const adaptive = await client.messages.countTokens({ model: MODEL, messages: msgs, thinking: { type: "adaptive" },
                                                        output_config: { effort: "high" } });
  // Thinking off makes Qwen3's template close an empty <think></think> in the prompt.
  assert.ok(off.input_tokens > on.input_tokens, `${off.input_tokens} vs ${on.input_tokens}`);
  assert.equal(adaptive.input_tokens, on.input_tokens);
  const m = await client.messages.create({ model: MODEL, max_tokens: 8, thinking: { type: "enabled", budget_tokens: 2048 },
                                           messages: msgs });
  assert.equal(usageSum(m.usage), on.input_tokens);
  // A prompt that ends inside <think> (a prefill) makes the output a thinking block.
  const { events, message } = await streamed({ max_tokens: 12, messages: [...msgs, { role: "assistant", content: "<think>\n" }],
                                               thinking: { type: "enabled", budget_tokens: 2048 } });
  assert.equal(eventOrderProblem(events), "");
  assert.equal(message.content[0]?.type, "thinking", JSON.stringify(message.content));
  assert.ok(message.content[0].thinking.length > 0);
  assert.ok(message.content[0].signature.length > 0);
  assert.ok(events.some((e) => e.type === "content_block_delta" && e.delta.type === "signature_delta"));
  // The client echoes the thinking block (with its signature) on the next turn.
  const next = await client.messages.create({ model: MODEL, max_tokens: 4, thinking: { type: "enabled", budget_tokens: 2048 },
    messages: [...msgs, { role: "assistant", content: [...message.content, { type: "text", text: "Rayleigh." }] },
               { role: "user", content: "More." }] });
  assert.equal(next.type, "message");
});

check("tool round trip: tool_use echoed, tool_result (string, blocks, is_error) accepted", async () => {
  const tools = [{ name: "get_weather", description: "Weather for a city",
                   input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }];
  const m = await client.messages.create({ model: MODEL, max_tokens: 4, tools, messages: [
    { role: "user", content: "Weather in Paris?" },
    { role: "assistant", content: [{ type: "text", text: "Checking." },
                                   { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
                                   { type: "tool_use", id: "toolu_02", name: "get_weather", input: { city: "Lyon" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "18C" },
                              { type: "tool_result", tool_use_id: "toolu_02", is_error: true,
                                content: [{ type: "text", text: "timeout" }] }] }] });
  assert.equal(m.type, "message");
  const counted = await client.messages.countTokens({ model: MODEL, tools, messages: user("Weather in Paris?") });
  const bare = await client.messages.countTokens({ model: MODEL, messages: user("Weather in Paris?") });
  assert.ok(counted.input_tokens > bare.input_tokens + 20, "tools are part of the counted prompt");
});

check("images get a clear 400 (no vision)", async () => {
  await assert.rejects(
    client.messages.create({ model: MODEL, max_tokens: 4, messages: [{ role: "user", content: [
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] }),
    (e) => e instanceof Anthropic.BadRequestError && /vision/.test(e.message));
});

check("over-long prompt: 400 prompt is too long: N tokens > M maximum", async () => {
  const long = "lorem ipsum dolor sit amet ".repeat(12000);  // ~50K+ tokens
  await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 16, messages: user(long) }), (e) => {
    assert.ok(e instanceof Anthropic.BadRequestError, String(e));
    assert.equal(e.error?.error?.type, "invalid_request_error");
    const match = /prompt is too long: (\d+) tokens > (\d+) maximum/.exec(e.message);
    assert.ok(match, e.message);
    assert.ok(Number(match[1]) > Number(match[2]));
    return true;
  });
});

check("malformed bodies get the Anthropic error shape and the server keeps serving", async () => {
  // [body, also invalid for count_tokens (which ignores the generation fields)]
  const bad = [
    ["{not json", true],
    ["[]", true],
    [{ model: MODEL, messages: user("x") }, false],                              // max_tokens missing
    [{ model: MODEL, max_tokens: 8 }, true],                                     // messages missing
    [{ model: MODEL, max_tokens: 8, messages: [] }, true],
    [{ model: MODEL, max_tokens: 8, messages: "hi" }, true],
    [{ model: MODEL, max_tokens: 8, messages: [{ role: "robot", content: "x" }] }, true],
    [{ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: [{ type: "text" }] }] }, true],
    [{ model: MODEL, max_tokens: 8, messages: [{ role: "user", content: 12 }] }, true],
    [{ model: MODEL, max_tokens: -1, messages: user("x") }, false],
    [{ model: MODEL, max_tokens: 8, temperature: "hot", messages: user("x") }, false],
    [{ model: MODEL, max_tokens: 8, tools: [{ name: "x" }], messages: user("x") }, true],
    [{ model: MODEL, max_tokens: 8, tool_choice: { type: "tool", name: "nope" }, tools: [], messages: user("x") }, true],
    [{ model: MODEL, max_tokens: 8, thinking: { type: "sometimes" }, messages: user("x") }, true],
    [{ model: MODEL, max_tokens: 8, system: 5, messages: user("x") }, true],
    [{ model: MODEL, max_tokens: 8, output_config: { format: { type: "yaml" } }, messages: user("x") }, true],
  ];
  for (const [body, countTokensToo] of bad) {
    assertAnthropicError(await post("/v1/messages", body), 400, "invalid_request_error");
    if (countTokensToo) assertAnthropicError(await post("/v1/messages/count_tokens", body), 400, "invalid_request_error");
  }
  await assert.rejects(client.messages.create({ model: MODEL, max_tokens: 8, messages: [] }),
                       (e) => e instanceof Anthropic.BadRequestError);
  const ok = await client.messages.create({ model: MODEL, max_tokens: 2, messages: user("still there?") });
  assert.equal(ok.type, "message");
});

check("unknown /v1/messages paths: 404 not_found_error; OpenAI paths keep their shape", async () => {
  assertAnthropicError(await post("/v1/messages/batches", {}), 404, "not_found_error");
  const openai = await post("/v1/chat/completions", { messages: "x" });
  assert.equal(openai.status, 400);
  assert.equal(typeof openai.json.error.message, "string");
  assert.equal(openai.json.type, undefined);
});

check("authentication: x-api-key or bearer; a bad key gets authentication_error", async () => {
  const url = process.env.LLMESH_AUTH_URL;
  if (!url) return;
  const body = JSON.stringify({ model: MODEL, max_tokens: 2, messages: user("hi") });
  const send = (headers) => fetch(`${url}/v1/messages?beta=true`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  let r = await send({ "x-api-key": "wrong" });
  assert.equal(r.status, 401);
  const err = await r.json();
  assert.equal(err.type, "error");
  assert.equal(err.error.type, "authentication_error");
  assert.equal((await send({ "x-api-key": "secret" })).status, 200);
  assert.equal((await send({ authorization: "Bearer secret" })).status, 200);
  const authed = new Anthropic({ baseURL: url, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(authed.messages.countTokens({ model: MODEL, messages: user("x") }),
                       (e) => e instanceof Anthropic.AuthenticationError);
  if (BRIDGED) return;
  const big = await fetch(`${url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "secret" },
                                                  body: JSON.stringify({ pad: "x".repeat(300000) }) });
  assert.equal(big.status, 413);
  const bigBody = await big.json();
  assert.equal(bigBody.type, "error");
  assert.equal(bigBody.error.type, "request_too_large");
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n${e.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
