// Drives `llmesh serve` /v1/responses with the official openai npm SDK.
//   node responses_sdk_test.mjs   (env: LLMESH_URL, NODE_MODULES)
// Each check throws on failure; the process exits non-zero when any failed.
// Checks that need constrained decoding (forced tool calls, json_schema) are
// reported as "skip" while the server answers them with 501.
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const BASE = process.env.LLMESH_URL;
const { default: OpenAI } = await import(pathToFileURL(`${process.env.NODE_MODULES}/openai/index.mjs`).href);
const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: "unused", maxRetries: 0, timeout: 120_000 });
const MODEL = "tiny";
const NO_THINKING = { effort: "none" };

const checks = [];
const check = (name, fn) => checks.push([name, fn]);
class Skip extends Error {}

// A 501 from the constrained decoder means "not built yet": skip, don't fail.
async function orSkip(promise) {
  try {
    return await promise;
  } catch (e) {
    if (e.status === 501) throw new Skip(e.message);
    throw e;
  }
}

// Checks the raw event list the way the SDK and Codex read it; returns the
// output text, the function call items and the terminal response.
function checkEventOrder(events) {
  assert.ok(events.length >= 3, `only ${events.length} events`);
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `sequence_number of event ${i} (${e.type})`));
  assert.equal(events[0].type, "response.created");
  assert.equal(events[1].type, "response.in_progress");
  assert.equal(events[0].response.status, "in_progress");
  const last = events.at(-1);
  assert.ok(["response.completed", "response.incomplete"].includes(last.type), `last event ${last.type}`);
  const added = new Map();  // output_index -> item
  let open = null;
  let text = "";
  for (const e of events.slice(2, -1)) {
    if (e.type === "response.output_item.added") {
      assert.equal(open, null, "an item was added while another is open");
      assert.equal(e.output_index, added.size, "output_index increases by one");
      added.set(e.output_index, e.item);
      open = e.output_index;
      continue;
    }
    if (e.type === "keepalive") continue;
    assert.equal(e.output_index, open, `${e.type} at output_index ${e.output_index} while ${open} is open`);
    if (e.item_id) assert.equal(e.item_id, added.get(e.output_index).id, `${e.type} item_id`);
    if (e.type === "response.output_text.delta") text += e.delta;
    if (e.type === "response.output_item.done") open = null;
  }
  assert.equal(open, null, "an item was never done");
  const final = last.response;
  assert.equal(final.output.length, added.size, "the final output lists every item");
  for (const item of final.output) assert.ok(["reasoning", "message", "function_call"].includes(item.type), item.type);
  const reasoningAt = final.output.findIndex((i) => i.type === "reasoning");
  const messageAt = final.output.findIndex((i) => i.type === "message");
  if (reasoningAt >= 0 && messageAt >= 0) assert.ok(reasoningAt < messageAt, "reasoning comes before the message");
  return { text, final, calls: final.output.filter((i) => i.type === "function_call") };
}

async function rawStream(params) {
  const stream = await client.responses.create({ ...params, stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  return events;
}

function outputText(response) {
  return response.output.filter((i) => i.type === "message").flatMap((i) => i.content).map((c) => c.text).join("");
}

function checkUsage(usage, outputTokens) {
  assert.ok(usage.input_tokens > 0);
  assert.equal(typeof usage.input_tokens_details.cached_tokens, "number");
  assert.ok(usage.input_tokens_details.cached_tokens <= usage.input_tokens);
  if (outputTokens !== undefined) assert.equal(usage.output_tokens, outputTokens);
  assert.equal(typeof usage.output_tokens_details.reasoning_tokens, "number");
  assert.ok(usage.output_tokens_details.reasoning_tokens <= usage.output_tokens);
  assert.equal(usage.total_tokens, usage.input_tokens + usage.output_tokens);
}

check("non-streaming: response object, exact usage, incomplete at max_output_tokens", async () => {
  const r = await client.responses.create({ model: MODEL, input: "Tell me about llamas.", max_output_tokens: 12,
    temperature: 0, ignore_eos: true, reasoning: NO_THINKING });
  assert.equal(r.object, "response");
  assert.match(r.id, /^resp_/);
  assert.equal(r.model, MODEL);
  assert.equal(r.status, "incomplete");
  assert.equal(r.incomplete_details.reason, "max_output_tokens");
  assert.equal(r.max_output_tokens, 12);
  checkUsage(r.usage, 12);
  assert.equal(typeof r.output_text, "string");  // the SDK's convenience field, built from output
});

check("streaming: the SDK stream helper accepts the events; stream and non-stream agree", async () => {
  const params = { model: MODEL, input: [{ role: "developer", content: "You are terse." },
    { role: "user", content: [{ type: "input_text", text: "Say something." }] }],
    instructions: "Answer in English.", max_output_tokens: 10, temperature: 0, ignore_eos: true, reasoning: NO_THINKING };
  const plain = await client.responses.create(params);
  const helper = client.responses.stream(params);
  const deltas = [];
  helper.on("response.output_text.delta", (e) => deltas.push(e.delta));
  const final = await helper.finalResponse();
  assert.equal(final.status, "incomplete");
  assert.equal(outputText(final), outputText(plain), "greedy stream and non-stream differ");
  assert.equal(deltas.join(""), outputText(final));
  assert.equal(final.usage.input_tokens, plain.usage.input_tokens);
  checkUsage(final.usage, 10);
  const events = await rawStream(params);
  const { text, final: last } = checkEventOrder(events);
  assert.equal(text, outputText(plain));
  assert.equal(last.instructions, "Answer in English.");
});

check("reasoning switch: effort none renders the empty think block, effort high does not", async () => {
  const base = { model: MODEL, input: "Why is the sky blue?", max_output_tokens: 4, temperature: 0, ignore_eos: true };
  const off = await client.responses.create({ ...base, reasoning: { effort: "none" } });
  const on = await client.responses.create({ ...base, reasoning: { effort: "high", summary: "auto" } });
  // Qwen3's template appends "<think>\n\n</think>\n\n" (4 tokens) when thinking is off.
  assert.equal(off.usage.input_tokens, on.usage.input_tokens + 4);
  assert.deepEqual(on.reasoning, { effort: "high", summary: "auto" });
  const events = await rawStream({ ...base, reasoning: { effort: "high", summary: "auto" },
    include: ["reasoning.encrypted_content"] });
  const { final } = checkEventOrder(events);
  for (const item of final.output.filter((i) => i.type === "reasoning")) {
    assert.equal(typeof item.encrypted_content, "string");
    assert.equal(item.summary[0].type, "summary_text");
  }
});

const weatherTool = { type: "function", name: "get_weather", description: "Weather for a city", strict: true,
  parameters: { type: "object", properties: { city: { type: "string", maxLength: 12 },
    unit: { type: "string", enum: ["c", "f"] } }, required: ["city", "unit"], additionalProperties: false } };
const timeTool = { type: "function", name: "get_time", parameters: { type: "object", properties: {
  zone: { type: "string", maxLength: 8 } }, required: ["zone"], additionalProperties: false } };

function checkWeatherCall(call) {
  assert.equal(call.type, "function_call");
  assert.equal(call.name, "get_weather");
  assert.match(call.call_id, /\S/);
  const args = JSON.parse(call.arguments);
  assert.equal(typeof args.city, "string");
  assert.ok(["c", "f"].includes(args.unit), `unit ${args.unit}`);
}

check("forced function call (named, streaming and not) is valid by construction; the result goes back", async () => {
  const params = { model: MODEL, input: "Weather in Paris?", tools: [weatherTool, timeTool, { type: "web_search" }],
    tool_choice: { type: "function", name: "get_weather" }, max_output_tokens: 200, reasoning: NO_THINKING };
  const r = await orSkip(client.responses.create(params));
  assert.equal(r.status, "completed");
  const calls = r.output.filter((i) => i.type === "function_call");
  assert.ok(calls.length >= 1, JSON.stringify(r.output));
  checkWeatherCall(calls[0]);
  const events = await rawStream(params);
  const streamed = checkEventOrder(events);
  assert.ok(streamed.calls.length >= 1);
  checkWeatherCall(streamed.calls[0]);
  const argsDeltas = events.filter((e) => e.type === "response.function_call_arguments.delta");
  assert.equal(argsDeltas.map((e) => e.delta).join(""), streamed.calls[0].arguments);
  // Turn 2: the call and its output are sent back (stateless history).
  const next = await client.responses.create({ model: MODEL, tools: params.tools, max_output_tokens: 4,
    reasoning: NO_THINKING, ignore_eos: true,
    input: [{ role: "user", content: "Weather in Paris?" }, ...r.output,
      { type: "function_call_output", call_id: calls[0].call_id, output: "{\"temp\": 21}" }] });
  checkUsage(next.usage, 4);
  assert.ok(next.usage.input_tokens > r.usage.input_tokens);
});

check("tool_choice required picks one of the tools", async () => {
  const r = await orSkip(client.responses.create({ model: MODEL, input: "Do something.",
    tools: [weatherTool, timeTool], tool_choice: "required", max_output_tokens: 200, reasoning: NO_THINKING }));
  const calls = r.output.filter((i) => i.type === "function_call");
  assert.ok(calls.length >= 1, JSON.stringify(r.output));
  assert.ok(["get_weather", "get_time"].includes(calls[0].name));
  const args = JSON.parse(calls[0].arguments);
  if (calls[0].name === "get_time") assert.equal(typeof args.zone, "string");
  else checkWeatherCall(calls[0]);
});

check("text.format json_schema and json_object give parseable, valid JSON", async () => {
  const schema = { type: "object", properties: { answer: { type: "string", maxLength: 16 },
    count: { type: "integer" }, mood: { enum: ["happy", "sad"] } }, required: ["answer", "count", "mood"],
    additionalProperties: false };
  const r = await orSkip(client.responses.create({ model: MODEL, input: "Reply in JSON.", max_output_tokens: 200,
    reasoning: NO_THINKING, text: { format: { type: "json_schema", name: "reply", schema, strict: true } } }));
  assert.equal(r.status, "completed");
  const value = JSON.parse(outputText(r));
  assert.deepEqual(Object.keys(value).sort(), ["answer", "count", "mood"]);
  assert.equal(typeof value.answer, "string");
  assert.ok(Number.isInteger(value.count), `count ${value.count}`);
  assert.ok(["happy", "sad"].includes(value.mood), `mood ${value.mood}`);
  assert.equal(r.text.format.type, "json_schema");
  const events = await rawStream({ model: MODEL, input: "JSON please.", max_output_tokens: 200,
    reasoning: NO_THINKING, text: { format: { type: "json_object" } } });
  const { text, final } = checkEventOrder(events);
  // Any object is allowed, so the random model may still be writing one at max_output_tokens.
  assert.match(text, /^\s*\{/);
  if (final.status === "completed") {
    const obj = JSON.parse(text);
    assert.ok(typeof obj === "object" && obj !== null && !Array.isArray(obj));
  } else {
    assert.equal(final.incomplete_details.reason, "max_output_tokens");
  }
});

check("previous_response_id continues a stored response (and reuses its prompt from the prefix cache)", async () => {
  const base = { model: MODEL, max_output_tokens: 6, temperature: 0, ignore_eos: true, reasoning: NO_THINKING };
  const first = await client.responses.create({ ...base, input: "My name is Ada. Remember it, please." });
  const second = await client.responses.create({ ...base, input: "What is my name?", previous_response_id: first.id });
  assert.equal(second.previous_response_id, first.id);
  // The second prompt holds the first one's input and output.
  assert.ok(second.usage.input_tokens > first.usage.input_tokens + first.usage.output_tokens,
    `${second.usage.input_tokens} vs ${first.usage.input_tokens} + ${first.usage.output_tokens}`);
  assert.ok(second.usage.input_tokens_details.cached_tokens >= first.usage.input_tokens - 16,
    `cached ${second.usage.input_tokens_details.cached_tokens} of the first ${first.usage.input_tokens}`);
  // The same conversation sent statelessly renders the same prompt.
  const stateless = await client.responses.create({ ...base,
    input: [{ role: "user", content: "My name is Ada. Remember it, please." }, ...first.output,
      { role: "user", content: "What is my name?" }] });
  assert.equal(stateless.usage.input_tokens, second.usage.input_tokens);
  // Streaming responses are stored too; store: false ones are not.
  const events = await rawStream({ ...base, input: "Next?", previous_response_id: second.id });
  const streamed = checkEventOrder(events).final;
  const third = await client.responses.create({ ...base, input: "And?", previous_response_id: streamed.id });
  assert.ok(third.usage.input_tokens > streamed.usage.input_tokens);
  const unstored = await client.responses.create({ ...base, input: "Forget me.", store: false });
  await assert.rejects(client.responses.create({ ...base, input: "x", previous_response_id: unstored.id }),
    (e) => e.status === 400 && /not found/.test(e.message));
});

async function metrics() {
  const text = await (await fetch(`${BASE}/metrics`)).text();
  const value = (name) => {
    const m = text.match(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m"));
    assert.ok(m, `metric ${name} missing`);
    return Number(m[1]);
  };
  return { running: value("llmesh:num_requests_running"), used: value("llmesh:kv_cache_blocks_used") };
}

check("a client that leaves mid-stream cancels the generation", async () => {
  const controller = new AbortController();
  let seen = 0;
  let during = null;
  try {
    const stream = await client.responses.create({ model: MODEL, input: "Go on forever.", max_output_tokens: 30000,
      ignore_eos: true, stream: true, reasoning: NO_THINKING }, { signal: controller.signal });
    for await (const event of stream) {
      if (event.type.endsWith(".delta") && ++seen === 20) {
        during = await metrics();
        controller.abort();
      }
    }
  } catch (e) {
    if (!(e.name === "AbortError" || e.constructor?.name === "APIUserAbortError")) throw e;
  }
  assert.ok(during && during.running === 1, `during: ${JSON.stringify(during)}`);
  let after = null;
  for (let i = 0; i < 50; ++i) {
    after = await metrics();
    if (after.running === 0 && after.used === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(after.running, 0, "request still running after the disconnect");
  assert.equal(after.used, 0, "KV blocks still held after the disconnect");
});

check("malformed bodies get OpenAI's error shape; the server keeps serving", async () => {
  const post = async (body, raw = false) => {
    const res = await fetch(`${BASE}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" },
      body: raw ? body : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const expectError = async (body, status, param, raw = false) => {
    const r = await post(body, raw);
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(typeof r.body.error.message, "string");
    assert.ok(r.body.error.message.length > 0);
    assert.equal(typeof r.body.error.type, "string");
    assert.ok("param" in r.body.error && "code" in r.body.error);
    if (param !== undefined) assert.equal(r.body.error.param, param);
  };
  await expectError("{not json", 400, undefined, true);
  await expectError("[1, 2]", 400, undefined, true);
  await expectError({ model: MODEL }, 400, "input");
  await expectError({ input: 42 }, 400, "input");
  await expectError({ input: [{ type: "message", role: "user" }] }, 400, "input[0].content");
  await expectError({ input: [{ role: "user", content: [{ type: "input_image", image_url: "data:," }] }] }, 400,
    "input[0].content[0].type");
  await expectError({ input: "x", previous_response_id: "resp_abc" }, 400, "previous_response_id");
  await expectError({ input: "x", temperature: "hot" }, 400, "temperature");
  await expectError({ input: "x", tool_choice: "required" }, 400, "tool_choice");
  await expectError({ input: "x", max_output_tokens: 100_000_000 }, 400, "max_output_tokens");
  await expectError({ model: "nope", input: "x" }, 404, "model");
  // Errors through the SDK: typed exceptions, also for streaming requests (the error comes before the stream).
  await assert.rejects(client.responses.create({ model: MODEL, input: "x", temperature: 9 }), (e) => e.status === 400);
  await assert.rejects(client.responses.create({ model: MODEL, input: 7, stream: true }), (e) => e.status === 400);
  const ok = await client.responses.create({ model: MODEL, input: "still there?", max_output_tokens: 2,
    ignore_eos: true, reasoning: NO_THINKING });
  checkUsage(ok.usage, 2);
});

let failed = 0;
for (const [name, fn] of checks) {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    if (e instanceof Skip) {
      console.log(`skip ${name}: ${e.message}`);
      continue;
    }
    failed++;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
