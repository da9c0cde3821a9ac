// Drives a running `llmesh serve` with the official openai npm SDK.
//   node openai_sdk_test.mjs   (env: LLMESH_URL, NODE_MODULES; LLMESH_API_KEY when the server needs one)
// Each check throws on failure; the process exits non-zero.
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const BASE = process.env.LLMESH_URL;
const { default: OpenAI } = await import(pathToFileURL(`${process.env.NODE_MODULES}/openai/index.mjs`).href);
// Raw fetches send the key the SDK sends.
const AUTH = { authorization: `Bearer ${process.env.LLMESH_API_KEY ?? "unused"}` };
const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: process.env.LLMESH_API_KEY ?? "unused", maxRetries: 0, timeout: 60_000 });
const MODEL = "tiny";

async function chat(messages, extra = {}) {
  return client.chat.completions.create({ model: MODEL, messages, temperature: 0, ignore_eos: true, ...extra });
}

// Streams a chat request; returns {text, reasoning, finish, usage, chunks}.
async function chatStream(messages, extra = {}, onChunk = null) {
  const stream = await client.chat.completions.create({
    model: MODEL, messages, temperature: 0, ignore_eos: true, stream: true,
    stream_options: { include_usage: true }, ...extra,
  });
  const out = { text: "", reasoning: "", finish: null, usage: null, chunks: [] };
  for await (const chunk of stream) {
    out.chunks.push(chunk);
    if (chunk.usage) out.usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    out.text += choice.delta.content ?? "";
    out.reasoning += choice.delta.reasoning_content ?? "";
    if (choice.finish_reason) out.finish = choice.finish_reason;
    if (onChunk && onChunk(chunk, stream) === false) break;
  }
  return out;
}

async function metrics() {
  const text = await (await fetch(`${BASE}/metrics`, { headers: AUTH })).text();
  const value = (name) => {
    const m = text.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m"));
    assert.ok(m, `metric ${name} missing`);
    return Number(m[1]);
  };
  return { running: value("llmesh:num_requests_running"), used: value("llmesh:kv_cache_blocks_used"),
           generated: value("llmesh:generation_tokens_total") };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Metrics once the engine is idle: stats are published at the end of an engine step, so a client can
// hold its full response a moment before the finished request leaves num_requests_running.
async function idleMetrics() {
  let m = null;
  for (let i = 0; i < 50; ++i) {
    m = await metrics();
    if (m.running === 0 && m.used === 0) break;
    await sleep(100);
  }
  return m;
}
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const user = (content) => [{ role: "user", content }];

check("stream and non-stream agree; usage is exact", async () => {
  const messages = user("Tell me about llamas.");
  const a = await chat(messages, { max_tokens: 12 });
  assert.equal(a.object, "chat.completion");
  assert.equal(a.usage.completion_tokens, 12);
  assert.equal(a.usage.total_tokens, a.usage.prompt_tokens + 12);
  assert.equal(a.choices[0].finish_reason, "length");
  const b = await chatStream(messages, { max_tokens: 12 });
  assert.equal(b.chunks[0].choices[0].delta.role, "assistant");
  assert.equal(b.finish, "length");
  assert.equal(b.usage.completion_tokens, 12);
  assert.equal(b.usage.prompt_tokens, a.usage.prompt_tokens);
  assert.equal(b.text + b.reasoning, a.choices[0].message.content + (a.choices[0].message.reasoning_content ?? ""));
  const c = await client.completions.create({ model: MODEL, prompt: "Hello", max_tokens: 4, temperature: 0, ignore_eos: true });
  assert.equal(c.usage.completion_tokens, 4);
});

check("models list", async () => {
  const list = await client.models.list();
  assert.deepEqual(list.data.map((m) => m.id), [MODEL]);
});

check("tools are accepted and rendered; the result is never a 500", async () => {
  const tools = [{ type: "function", function: { name: "get_weather", description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
  const messages = user("Weather in Paris?");
  const rendered = await (await fetch(`${BASE}/apply-template`, { method: "POST", headers: AUTH,
    body: JSON.stringify({ messages, tools }) })).json();
  assert.match(rendered.prompt, /get_weather/);
  const r = await chat(messages, { tools, tool_choice: "auto", max_tokens: 16 });
  assert.ok(["stop", "length", "tool_calls"].includes(r.choices[0].finish_reason));
  for (const call of r.choices[0].message.tool_calls ?? []) JSON.parse(call.function.arguments);
  // A conversation that carries an assistant tool call and its result renders and runs.
  const history = [...messages,
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function",
      function: { name: "get_weather", arguments: "{\"city\":\"Paris\"}" } }] },
    { role: "tool", tool_call_id: "call_1", content: "sunny, 21C" }];
  const r2 = await chatStream(history, { tools, max_tokens: 8 });
  assert.equal(r2.usage.completion_tokens, 8);
});

check("stop string split across tokens is cut and never leaks", async () => {
  const messages = user("Write a long sentence.");
  const full = await chat(messages, { max_tokens: 40, logprobs: true, top_logprobs: 2 });
  const text = full.choices[0].message.content;
  const tokens = full.choices[0].logprobs.content;
  assert.equal(tokens.length, 40);
  for (const t of tokens) {  // greedy: the sampled token is the most likely one
    assert.equal(t.top_logprobs.length, 2);
    assert.deepEqual(t.top_logprobs[0].bytes, t.bytes);
    assert.ok(Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-5 && t.logprob <= 0);
    assert.ok(t.top_logprobs[1].logprob <= t.top_logprobs[0].logprob);
  }
  // Token boundaries (byte offsets) where the tokens so far equal the text so far.
  const textBytes = Buffer.from(text);
  let offset = 0;
  const boundaries = [];
  for (const t of tokens) {
    const bytes = Buffer.from(t.bytes);
    if (!textBytes.subarray(offset, offset + bytes.length).equals(bytes)) break;
    offset += bytes.length;
    const before = textBytes.subarray(0, offset).toString();
    if (Buffer.from(before).equals(textBytes.subarray(0, offset)) && offset < textBytes.length) boundaries.push(before.length);
  }
  const usable = boundaries.filter((i) => i >= 1 && i + 1 <= text.length && i > 2);
  assert.ok(usable.length > 0, `no usable token boundary in ${JSON.stringify(text)}`);
  const at = usable[Math.floor(usable.length / 2)];
  const chars = Array.from(text);  // code points
  let cp = 0, idx = 0;
  while (idx < at) idx += chars[cp++].length;
  const stop = chars[cp - 1] + chars[cp];  // the last character of one token + the first of the next
  const expected = text.slice(0, text.indexOf(stop));
  const r = await chatStream(messages, { max_tokens: 40, stop: [stop] });
  assert.equal(r.finish, "stop");
  assert.equal(r.text, expected);
  for (const chunk of r.chunks) assert.ok(!(chunk.choices[0]?.delta.content ?? "").includes(stop));
  assert.ok(r.usage.completion_tokens < 40, "generation should end at the stop string");
  const nonstream = await chat(messages, { max_tokens: 40, stop });
  assert.equal(nonstream.choices[0].message.content, expected);
});

check("seeds make sampling reproducible", async () => {
  const messages = user("Random words please.");
  const opts = { temperature: 1.0, top_p: 0.95, max_tokens: 16 };
  const a = await chat(messages, { ...opts, seed: 1234 });
  const b = await chat(messages, { ...opts, seed: 1234 });
  const c = await chat(messages, { ...opts, seed: 999 });
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
  assert.notEqual(a.choices[0].message.content, c.choices[0].message.content);
});

check("8 parallel streams complete and match the same requests run one at a time", async () => {
  const prompts = Array.from({ length: 8 }, (_, i) => user(`Story number ${i}: once upon a time`));
  const sequential = [];
  for (const p of prompts) sequential.push((await chat(p, { max_tokens: 24 })).choices[0].message.content);
  const parallel = await Promise.all(prompts.map((p) => chatStream(p, { max_tokens: 24 })));
  parallel.forEach((r, i) => {
    assert.equal(r.finish, "length");
    assert.equal(r.usage.completion_tokens, 24);
    assert.equal(r.text, sequential[i], `stream ${i} differs`);
  });
});

check("repeated prefix is served from cache; /flush_cache changes nothing but the counts", async () => {
  const system = "You are a careful assistant. ".repeat(60);
  const messages = [{ role: "system", content: system }, { role: "user", content: "Summarize." }];
  const first = await chat(messages, { max_tokens: 8 });
  const second = await chat(messages, { max_tokens: 8 });
  const prompt = second.usage.prompt_tokens;
  assert.ok(prompt > 300, `prompt ${prompt}`);
  const cached = second.usage.prompt_tokens_details.cached_tokens;
  assert.ok(cached >= prompt - 64 && cached < prompt, `cached ${cached} of ${prompt}`);
  assert.equal(second.choices[0].message.content, first.choices[0].message.content);
  const flushed = await (await fetch(`${BASE}/flush_cache`, { method: "POST", headers: AUTH })).json();
  assert.equal(flushed.status, "ok");
  const third = await chat(messages, { max_tokens: 8 });
  assert.equal(third.usage.prompt_tokens_details.cached_tokens, 0);
  assert.equal(third.choices[0].message.content, first.choices[0].message.content);
});

check("a client that disconnects mid-stream has its request cancelled and blocks freed", async () => {
  const before = await idleMetrics();
  assert.equal(before.running, 0);
  const controller = new AbortController();
  let seen = 0;
  let during = null;
  try {
    const stream = await client.chat.completions.create(
      { model: MODEL, messages: user("Go on forever."), max_tokens: 30000, ignore_eos: true, stream: true },
      { signal: controller.signal });
    for await (const _chunk of stream) {
      if (++seen === 20) {
        during = await metrics();
        controller.abort();
      }
    }
  } catch (e) {
    if (!(e.name === "AbortError" || e.constructor?.name === "APIUserAbortError")) throw e;
  }
  assert.ok(during && during.running === 1 && during.used > 0, `during: ${JSON.stringify(during)}`);
  const after = await idleMetrics();
  assert.equal(after.running, 0, "request still running after the disconnect");
  assert.equal(after.used, 0, "blocks still held after the disconnect");
  await sleep(300);
  const later = await metrics();
  assert.equal(later.generated, after.generated, "tokens still being generated");
  assert.ok(after.generated - before.generated < 30000);
});

check("errors come back as OpenAI errors and the server keeps serving", async () => {
  const expectError = async (promise, status, param) => {
    try {
      await promise;
    } catch (e) {
      assert.equal(e.status, status, String(e));
      if (param) assert.equal(e.error?.param ?? e.param, param);
      return;
    }
    assert.fail(`expected HTTP ${status}`);
  };
  await expectError(chat(user("x"), { temperature: -1 }), 400, "temperature");
  await expectError(chat(user("x"), { max_tokens: 10_000_000 }), 400, "max_tokens");
  await expectError(client.chat.completions.create({ model: "nope", messages: user("x") }), 404, "model");
  await expectError(chat(user("x"), { n: 3 }), 400, "n");
  const ok = await chat(user("still there?"), { max_tokens: 2 });
  assert.equal(ok.usage.completion_tokens, 2);
});

let failed = 0;
for (const [name, fn] of checks) {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
