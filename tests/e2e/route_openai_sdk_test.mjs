// Drives `llmesh route` (in front of llmesh serve upstreams) with the official openai npm SDK.
//   node route_openai_sdk_test.mjs   (env: LLMESH_URL = the router, NODE_MODULES)
// Each check throws on failure; the process exits non-zero when any failed.
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const BASE = process.env.LLMESH_URL;
const { default: OpenAI } = await import(pathToFileURL(`${process.env.NODE_MODULES}/openai/index.mjs`).href);
const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: "unused", maxRetries: 0, timeout: 60_000 });
const MODEL = "tiny";
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const SYSTEM = "You are a terse assistant that answers in one line. ".repeat(6);

check("chat: stream equals non-stream; usage exact; same upstream; second turn cached", async () => {
  const messages = [{ role: "system", content: SYSTEM }, { role: "user", content: "Tell me about llamas." }];
  const a = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 10, temperature: 0, ignore_eos: true });
  assert.equal(a.usage.completion_tokens, 10);
  const stream = await client.chat.completions.create({ model: MODEL, messages, max_tokens: 10, temperature: 0, ignore_eos: true,
                                                        stream: true, stream_options: { include_usage: true } });
  let text = "", usage = null, first = null;
  for await (const chunk of stream) {
    first ??= chunk;
    if (chunk.usage) usage = chunk.usage;
    text += chunk.choices[0]?.delta?.content ?? "";
  }
  assert.equal(first.choices[0].delta.role, "assistant");
  assert.equal(text, a.choices[0].message.content);
  assert.equal(usage.prompt_tokens, a.usage.prompt_tokens);
  assert.ok(usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(usage));
});

check("chat: the raw answer names the upstream; a session id pins it", async () => {
  const upstreams = new Set();
  for (let i = 0; i < 4; i++) {
    const { response } = await client.chat.completions.create(
      { model: MODEL, messages: [{ role: "user", content: `ping ${i}` }], max_tokens: 2 },
      { headers: { "x-session-id": "pinned-session" } }).withResponse();
    upstreams.add(response.headers.get("x-llmesh-upstream"));
  }
  assert.equal(upstreams.size, 1, [...upstreams].join(","));
});

check("completions: non-stream and stream", async () => {
  const c = await client.completions.create({ model: MODEL, prompt: "Once upon a time", max_tokens: 5, temperature: 0, ignore_eos: true });
  assert.equal(c.usage.completion_tokens, 5);
  const s = await client.completions.create({ model: MODEL, prompt: "Once upon a time", max_tokens: 5, temperature: 0,
                                              ignore_eos: true, stream: true });
  let text = "";
  for await (const chunk of s) text += chunk.choices[0]?.text ?? "";
  assert.equal(text, c.choices[0].text);
});

check("responses: streamed events in order, usage with cached tokens on a repeat", async () => {
  const params = { model: MODEL, instructions: SYSTEM, input: "Name a colour.", max_output_tokens: 6,
                   reasoning: { effort: "none" }, prompt_cache_key: "resp-session" };
  await client.responses.create(params);
  const stream = await client.responses.create({ ...params, stream: true });
  const events = [];
  for await (const e of stream) events.push(e);
  events.forEach((e, i) => assert.equal(e.sequence_number, i));
  assert.equal(events[0].type, "response.created");
  const last = events.at(-1);
  assert.ok(["response.completed", "response.incomplete"].includes(last.type), last.type);
  assert.ok(last.response.usage.input_tokens_details.cached_tokens > 0, JSON.stringify(last.response.usage));
});

check("models: the union of the upstreams", async () => {
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  assert.equal(models.length, 1);
  assert.equal(models[0].id, MODEL);
  assert.equal(models[0].upstreams.length, 3);
});

check("errors: the upstream's 400 passes through as BadRequestError", async () => {
  await assert.rejects(client.chat.completions.create({ model: MODEL, messages: [], max_tokens: 2 }),
                       (e) => e instanceof OpenAI.BadRequestError && typeof e.error?.message === "string");
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
