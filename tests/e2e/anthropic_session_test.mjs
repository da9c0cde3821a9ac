// A scripted Claude-Code-shaped session against a running `llmesh serve`
// (official @anthropic-ai/sdk): the same ~20K-token system + tools every turn,
// messages growing by tool results; prefix reuse read from
// cache_read_input_tokens; count_tokens exact and never queued behind generation.
//   node anthropic_session_test.mjs   (env: LLMESH_URL, NODE_MODULES)
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

import { TOOLS, first_messages, next_messages, system_blocks } from "./anthropic_fixture.mjs";

const BASE = process.env.LLMESH_URL;
const { default: Anthropic } = await import(pathToFileURL(`${process.env.NODE_MODULES}/@anthropic-ai/sdk/index.mjs`).href);
const client = new Anthropic({ baseURL: BASE, apiKey: "anything", maxRetries: 0, timeout: 120_000 });
const MODEL = "claude-sonnet-5-5";
const NUM_TURNS = 4;
const usageSum = (u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
const count = async (body) => (await client.messages.countTokens({ model: MODEL, system: body.system, tools: body.tools,
  messages: body.messages, thinking: body.thinking })).input_tokens;

// Claude Code's request: streamed, thinking adaptive, metadata, context_management.
function request(conversation_id, messages) {
  return {
    model: MODEL, max_tokens: 16, stream: true, system: system_blocks(conversation_id), tools: TOOLS, messages,
    thinking: { type: "adaptive" }, output_config: { effort: "high" },
    metadata: { user_id: JSON.stringify({ device_id: "d", session_id: conversation_id }) },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
  };
}

async function turn(body) {
  const { stream: _, ...params } = body;
  const stream = client.beta.messages.stream(params, { headers: { "anthropic-beta": "claude-code-20250219" } });
  const types = [];
  for await (const event of stream) types.push(event.type);
  assert.equal(types[0], "message_start");
  assert.equal(types.at(-1), "message_stop");
  return stream.finalMessage();
}

// The same over raw fetch, which sees the ping events the SDK hides; the
// message is accumulated here from the events.
async function rawTurn(body) {
  const r = await fetch(`${BASE}/v1/messages?beta=true`, {
    method: "POST", headers: { "content-type": "application/json", "x-api-key": "x", "anthropic-version": "2023-06-01" },
    body: JSON.stringify(body),
  });
  assert.equal(r.status, 200);
  const decoder = new TextDecoder();
  let buffered = "", message = null, partial = [];
  let startedAt = 0, firstContentAt = 0, numPings = 0;
  for await (const bytes of r.body) {
    buffered += decoder.decode(bytes, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const [eventLine, dataLine] = buffered.slice(0, end).split("\n");
      buffered = buffered.slice(end + 2);
      const e = JSON.parse(dataLine.slice(6));
      assert.equal(eventLine, `event: ${e.type}`);
      if (e.type === "ping") { numPings++; continue; }
      if (e.type === "message_start") { message = e.message; startedAt = Date.now(); continue; }
      if (!firstContentAt) firstContentAt = Date.now();
      if (e.type === "content_block_start") { message.content.push(e.content_block); partial.push(""); }
      if (e.type === "content_block_delta") {
        const b = message.content[e.index];
        if (e.delta.type === "text_delta") b.text += e.delta.text;
        if (e.delta.type === "thinking_delta") b.thinking += e.delta.thinking;
        if (e.delta.type === "signature_delta") b.signature = e.delta.signature;
        if (e.delta.type === "input_json_delta") partial[e.index] += e.delta.partial_json;
      }
      if (e.type === "content_block_stop" && message.content[e.index].type === "tool_use") {
        message.content[e.index].input = JSON.parse(partial[e.index] || "{}");
      }
      if (e.type === "message_delta") {
        Object.assign(message.usage, e.usage);
        message.stop_reason = e.delta.stop_reason;
      }
    }
  }
  // message_start goes out before prefill; a prefill longer than the 5 s keepalive interval gets pings.
  const waited = firstContentAt - startedAt;
  report.first_turn_wait_ms = waited;
  report.pings = numPings;
  if (waited > 6000) assert.ok(numPings > 0, `no ping while waiting ${waited} ms`);
  return message;
}

const report = {};
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n${e.stack ?? e}`);
  }
}

await check("the Claude-Code-shaped prompt is ~20K tokens and the billing header is dropped", async () => {
  const a = await count(request("conv-a", first_messages("List the files.")));
  const b = await count(request("conv-b-different-id", first_messages("List the files.")));
  report.first_prompt_tokens = a;
  assert.ok(a >= 15000 && a <= 30000, `prompt has ${a} tokens`);
  assert.equal(a, b, "the billing header must not reach the prompt");
});

await check(`a ${NUM_TURNS}-turn session reuses >= 95% of the previous prompt; count_tokens == usage`, async () => {
  let messages = first_messages("List the files and fix the failing test.");
  let previous = null;
  report.turns = [];
  for (let t = 1; t <= NUM_TURNS; t++) {
    const body = request("conv-a", messages);
    const started = Date.now();
    const m = t === 1 ? await rawTurn(body) : await turn(body);
    const prompt = usageSum(m.usage);
    assert.equal(await count(body), prompt, `turn ${t}: count_tokens differs from the usage sum`);
    report.turns.push({ turn: t, prompt_tokens: prompt, cache_read: m.usage.cache_read_input_tokens,
                        input: m.usage.input_tokens, seconds: (Date.now() - started) / 1000 });
    if (previous !== null) {
      const reuse = m.usage.cache_read_input_tokens / previous;
      assert.ok(reuse >= 0.95, `turn ${t}: cache_read ${m.usage.cache_read_input_tokens} of previous ${previous} (${reuse})`);
    }
    previous = prompt;
    messages = next_messages(messages, m, t);
  }
});

await check("a second conversation shares the system + tools prefix", async () => {
  const prefix = await count({ system: system_blocks("x"), tools: TOOLS, messages: [{ role: "user", content: "" }] });
  const m = await turn(request("conv-c", first_messages("A different task entirely.")));
  report.second_conversation = { prefix_tokens: prefix, cache_read: m.usage.cache_read_input_tokens };
  // Block granularity (16 tokens) and the user-turn header are the only slack.
  assert.ok(m.usage.cache_read_input_tokens >= prefix - 48, JSON.stringify(report.second_conversation));
});

await check("13 concurrent count_tokens answer while a generation runs", async () => {
  const body = request("conv-a", first_messages("List the files."));
  const stream = client.messages.stream({ ...body, stream: undefined, max_tokens: 100000,
                                          messages: [{ role: "user", content: "Write a very long story." }] });
  let finished = false;
  let numEvents = 0;
  let sawStop = false;
  const streaming = (async () => {
    for await (const event of stream) {
      if (event.type === "message_stop") sawStop = true;
      if (++numEvents > 1 && finished) break;  // checks done: leave (the server cancels)
    }
  })();
  while (numEvents < 3) await new Promise((r) => setTimeout(r, 20));  // generating now
  const started = Date.now();
  const counts = await Promise.all(Array.from({ length: 13 }, () => count(body)));
  const seconds = (Date.now() - started) / 1000;
  const eventsWhenDone = numEvents;
  const stoppedBeforeCounts = sawStop;
  finished = true;
  await streaming;
  report.concurrent_count_tokens = { seconds, tokens: counts[0] };
  assert.ok(counts.every((c) => c === counts[0]), String(counts));
  assert.ok(eventsWhenDone >= 3);
  assert.ok(!stoppedBeforeCounts, "the generation must still be running when count_tokens answered");
});

console.log(JSON.stringify(report));
process.exit(failed ? 1 : 0);
