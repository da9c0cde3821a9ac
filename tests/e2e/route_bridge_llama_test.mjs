// The Anthropic SDK through `llmesh route` bridging onto llama-server's OpenAI chat endpoint.
//   node route_bridge_llama_test.mjs   (env: LLMESH_URL = the router, NODE_MODULES)
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const { default: Anthropic } = await import(pathToFileURL(`${process.env.NODE_MODULES}/@anthropic-ai/sdk/index.mjs`).href);
const client = new Anthropic({ baseURL: process.env.LLMESH_URL, apiKey: "x", maxRetries: 0, timeout: 120_000 });
const MODEL = "claude-sonnet-5-5";
const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const user = (content) => [{ role: "user", content }];

check("non-streaming: shape and usage; count_tokens is never 0", async () => {
  const m = await client.messages.create({ model: MODEL, max_tokens: 8, system: "Be brief.", messages: user("hi") });
  assert.equal(m.type, "message");
  assert.equal(m.model, MODEL);
  assert.ok(m.content.length >= 1);
  assert.ok(m.usage.input_tokens + m.usage.cache_read_input_tokens > 0, JSON.stringify(m.usage));
  const counted = await client.messages.countTokens({ model: MODEL, system: "Be brief.", messages: user("hi") });
  assert.ok(counted.input_tokens > 0);
});

check("streaming: Anthropic's event order", async () => {
  const stream = client.messages.stream({ model: MODEL, max_tokens: 8, messages: user("Tell me a story.") });
  const types = [];
  for await (const e of stream) types.push(e.type);
  assert.equal(types[0], "message_start");
  assert.equal(types.at(-1), "message_stop");
  assert.equal(types.at(-2), "message_delta");
  const message = await stream.finalMessage();
  assert.ok(message.usage.output_tokens > 0);
});

check("tools and a tool result are accepted; a role system message stays in place", async () => {
  const tools = [{ name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
  const m = await client.messages.create({ model: MODEL, max_tokens: 4, tools, messages: [
    { role: "user", content: "Weather in Paris?" },
    { role: "system", content: "Use the tools." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18C" }] }] });
  assert.equal(m.type, "message");
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
