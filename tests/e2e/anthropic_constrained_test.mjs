// Forced tool calls (tool_choice any / tool) and structured output
// (output_config.format) on /v1/messages, driven by @anthropic-ai/sdk against
// a running `llmesh serve` with random weights: the JSON must be valid by
// construction. Exits 77 when the server does not implement constrained decoding yet (501).
//   node anthropic_constrained_test.mjs   (env: LLMESH_URL, NODE_MODULES)
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

import { TOOLS } from "./anthropic_fixture.mjs";

const BASE = process.env.LLMESH_URL;
const { default: Anthropic } = await import(pathToFileURL(`${process.env.NODE_MODULES}/@anthropic-ai/sdk/index.mjs`).href);
const client = new Anthropic({ baseURL: BASE, apiKey: "anything", maxRetries: 0, timeout: 120_000 });
const MODEL = "claude-sonnet-5-5";
const user = (content) => [{ role: "user", content }];
// Three of the Claude-Code-shaped tools (JSON Schema 2020-12: anyOf, const, enum, pattern,
// format, propertyNames, exclusiveMinimum, nested objects and arrays), short descriptions.
const tools = TOOLS.slice(1, 4).map((t) => ({ ...t, description: t.description.slice(0, 200) }));

// Validates `value` against the subset of JSON Schema the grammar enforces; keywords the
// server reported as ignored (x-llmesh-unenforced-schema-keywords) are skipped.
function validate(value, schema, ignored, where = "$") {
  const skip = (k) => ignored.has(k) || !(k in schema);
  if (!skip("const")) assert.deepEqual(value, schema.const, `${where}: const`);
  if (!skip("enum")) assert.ok(schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)), `${where}: enum ${value}`);
  if (!skip("anyOf")) {
    const ok = schema.anyOf.some((s) => { try { validate(value, s, ignored, where); return true; } catch { return false; } });
    assert.ok(ok, `${where}: anyOf ${JSON.stringify(value)}`);
  }
  if (!skip("type")) {
    const types = [schema.type].flat();
    const actual = value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
    const fits = types.some((t) => t === actual || (t === "integer" && Number.isInteger(value)) || (t === "number" && actual === "number"));
    assert.ok(fits, `${where}: type ${types} but got ${JSON.stringify(value)}`);
  }
  if (typeof value === "number") {
    if (!skip("minimum")) assert.ok(value >= schema.minimum, `${where}: minimum`);
    if (!skip("maximum")) assert.ok(value <= schema.maximum, `${where}: maximum`);
    if (!skip("exclusiveMinimum")) assert.ok(value > schema.exclusiveMinimum, `${where}: exclusiveMinimum`);
  }
  if (typeof value === "string") {
    if (!skip("minLength")) assert.ok([...value].length >= schema.minLength, `${where}: minLength`);
    if (!skip("maxLength")) assert.ok([...value].length <= schema.maxLength, `${where}: maxLength`);
    if (!skip("pattern")) assert.match(value, new RegExp(schema.pattern, "u"), `${where}: pattern`);
  }
  if (Array.isArray(value)) {
    if (!skip("minItems")) assert.ok(value.length >= schema.minItems, `${where}: minItems`);
    if (!skip("maxItems")) assert.ok(value.length <= schema.maxItems, `${where}: maxItems`);
    if (!skip("items")) value.forEach((v, i) => validate(v, schema.items, ignored, `${where}[${i}]`));
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const props = schema.properties ?? {};
    if (!skip("required")) for (const k of schema.required) assert.ok(k in value, `${where}: required ${k}`);
    for (const [k, v] of Object.entries(value)) {
      if (k in props) validate(v, props[k], ignored, `${where}.${k}`);
      else if (schema.additionalProperties === false && !ignored.has("additionalProperties")) assert.fail(`${where}: extra key ${k}`);
      else if (typeof schema.additionalProperties === "object") validate(v, schema.additionalProperties, ignored, `${where}.${k}`);
      if (!skip("propertyNames")) validate(k, schema.propertyNames, ignored, `${where}(key ${k})`);
    }
  }
}

// Entries read "maximum at #/properties/count" or "tool Grep: pattern at #/properties/path";
// the keyword is skipped wherever it appears.
const ignoredFrom = (response) =>
  new Set((response.headers.get("x-llmesh-unenforced-schema-keywords") ?? "").split(",")
    .map((entry) => entry.split(" at ")[0].trim().split(/[\s:]+/).at(-1)).filter(Boolean));

// The probe: 501 means constrained decoding is not there yet.
const probe = await fetch(`${BASE}/v1/messages`, {
  method: "POST", headers: { "content-type": "application/json", "x-api-key": "x" },
  body: JSON.stringify({ model: MODEL, max_tokens: 4, tools, tool_choice: { type: "any" }, messages: user("x") }),
});
if (probe.status === 501) {
  console.log(`SKIP: constrained decoding not implemented (${await probe.text()})`);
  process.exit(77);
}

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

function toolUse(message) {
  const calls = message.content.filter((b) => b.type === "tool_use");
  assert.equal(calls.length, 1, JSON.stringify(message.content));
  return calls[0];
}

await check("tool_choice any: one valid tool call from random weights (5 samples)", async () => {
  for (let seed = 0; seed < 5; seed++) {
    const { data: m, response } = await client.messages.create({
      model: MODEL, max_tokens: 400, temperature: 1, tools, tool_choice: { type: "any" },
      messages: user(`Do something useful (${seed}).`) }).withResponse();
    const call = toolUse(m);
    const tool = tools.find((t) => t.name === call.name);
    assert.ok(tool, `unknown tool ${call.name}`);
    validate(call.input, tool.input_schema, ignoredFrom(response));
    assert.match(call.id, /^toolu_/);
    assert.equal(m.stop_reason, "tool_use");
  }
});

await check("tool_choice tool: the named tool, streamed input_json_delta concatenates to the input", async () => {
  const { response: probeResponse } = await client.messages.create({ model: MODEL, max_tokens: 1, tools,
    tool_choice: { type: "tool", name: "Grep" }, messages: user("Search.") }).withResponse();
  const reported = ignoredFrom(probeResponse);
  const stream = client.messages.stream({ model: MODEL, max_tokens: 400, tools,
                                          tool_choice: { type: "tool", name: "Grep" }, messages: user("Search.") });
  let partial = "";
  for await (const e of stream) {
    if (e.type === "content_block_delta" && e.delta.type === "input_json_delta") partial += e.delta.partial_json;
  }
  const m = await stream.finalMessage();
  const call = toolUse(m);
  assert.equal(call.name, "Grep");
  assert.deepEqual(JSON.parse(partial), call.input);
  validate(call.input, tools.find((t) => t.name === "Grep").input_schema, reported);
});

await check("output_config.format: the text is JSON valid against the schema", async () => {
  const schema = { type: "object", additionalProperties: false, required: ["done", "level", "count"],
                   properties: { done: { type: "boolean" }, level: { enum: ["low", "high"] },
                                 count: { type: "integer", minimum: 0, maximum: 100 } } };
  for (let seed = 0; seed < 3; seed++) {
    const { data: m, response } = await client.messages.create({
      model: MODEL, max_tokens: 200, temperature: 1, messages: user(`Report status ${seed}.`),
      output_config: { format: { type: "json_schema", schema } } }).withResponse();
    const text = m.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    validate(JSON.parse(text), schema, ignoredFrom(response));
    assert.equal(m.stop_reason, "end_turn");
  }
});

process.exit(failed ? 1 : 0);
