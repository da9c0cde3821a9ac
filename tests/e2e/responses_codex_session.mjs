// A scripted Codex-shaped session against `llmesh serve` /v1/responses:
// the request shape Codex 0.17x sends (a ~17K-character developer prompt as
// the first input item, 9 function tools plus non-function ones, reasoning
// summary "auto", store false, encrypted reasoning included, stream true),
// stateless, the history growing every turn by the response's output items
// plus a tool result. From turn 2 on, at least 95% of the previous turn's
// prompt must be served from the prefix cache (usage.input_tokens_details.cached_tokens).
//   node responses_codex_session.mjs   (env: LLMESH_URL, NODE_MODULES)
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";

const BASE = process.env.LLMESH_URL;
const { default: OpenAI } = await import(pathToFileURL(`${process.env.NODE_MODULES}/openai/index.mjs`).href);
const client = new OpenAI({ baseURL: `${BASE}/v1`, apiKey: "unused", maxRetries: 0, timeout: 300_000 });
const NUM_TURNS = 5;
const MIN_REUSE = 0.95;

// ~17K characters of varied instructions (deterministic).
function developerPrompt() {
  const topics = ["shell commands", "file edits", "tests", "git", "planning", "sandboxing", "formatting", "reviews"];
  let text = "You are Codex, a coding agent running in a terminal. You are precise, safe and helpful.\n\n";
  for (let i = 0; text.length < 17_000; ++i) {
    const topic = topics[i % topics.length];
    text += `## Guideline ${i + 1}: ${topic}\n- When working on ${topic}, prefer small verifiable steps (rule ${i * 7 % 31}).\n` +
      `- Explain what you changed about ${topic} and why, in at most ${2 + (i % 5)} sentences.\n\n`;
  }
  return text;
}

function fn(name, description, properties, required) {
  return { type: "function", name, description, strict: false,
    parameters: { type: "object", properties, required, additionalProperties: false } };
}
const str = (description) => ({ type: "string", description });
const tools = [
  fn("exec_command", "Runs a command in a PTY.", { cmd: str("The command"), workdir: str("Directory"),
    yield_time_ms: { type: "number" }, max_output_tokens: { type: "number" } }, ["cmd"]),
  fn("write_stdin", "Writes to a running session.", { session_id: { type: "number" }, chars: str("Bytes") },
    ["session_id"]),
  fn("update_plan", "Updates the task plan.", { explanation: str("Why"), plan: { type: "array", items: {
    type: "object", properties: { step: str("Step"), status: { type: "string", enum: ["pending", "in_progress",
      "completed"] } }, required: ["step", "status"] } } }, ["plan"]),
  fn("apply_patch", "Edits files with a patch.", { input: str("The patch") }, ["input"]),
  fn("view_image", "Attaches a local image.", { path: str("Path") }, ["path"]),
  fn("list_mcp_resources", "Lists MCP resources.", { server: str("Server"), cursor: str("Cursor") }, []),
  fn("list_mcp_resource_templates", "Lists MCP templates.", { server: str("Server"), cursor: str("Cursor") }, []),
  fn("read_mcp_resource", "Reads an MCP resource.", { server: str("Server"), uri: str("URI") }, ["server", "uri"]),
  fn("request_user_input", "Asks the user.", { question: str("Question") }, ["question"]),
  { type: "namespace", name: "mcp__docs", description: "Docs server", tools: [] },
  { type: "web_search", external_web_access: false },
];

const input = [
  { type: "message", role: "developer", content: [{ type: "input_text", text: developerPrompt() }] },
  { type: "message", role: "user", content: [{ type: "input_text",
    text: "<environment_context>\n  <cwd>/tmp/project</cwd>\n  <shell>bash</shell>\n</environment_context>" }] },
  { type: "message", role: "user", content: [{ type: "input_text", text: "List the files and summarize them." }] },
];

let previousInputTokens = 0;
for (let turn = 1; turn <= NUM_TURNS; ++turn) {
  const t0 = Date.now();
  const stream = await client.responses.create({
    model: "tiny", stream: true, input, tools, tool_choice: "auto", parallel_tool_calls: true,
    reasoning: { effort: "none", summary: "auto" }, store: false, include: ["reasoning.encrypted_content"],
    prompt_cache_key: "session-1234", max_output_tokens: 24, temperature: 0,
  });
  let completed = null;
  let sequence = 0;
  const doneItems = [];
  for await (const event of stream) {
    assert.equal(event.sequence_number, sequence++, `turn ${turn}: sequence_number`);
    if (event.type === "response.output_item.done") doneItems.push(event.item);
    if (event.type === "response.completed" || event.type === "response.incomplete") completed = event.response;
  }
  assert.ok(completed, `turn ${turn}: no terminal event`);
  assert.deepEqual(completed.output, doneItems, `turn ${turn}: final output differs from the done items`);
  const usage = completed.usage;
  const cached = usage.input_tokens_details.cached_tokens;
  console.log(`turn ${turn}: input ${usage.input_tokens} tokens, cached ${cached}, output ${usage.output_tokens} ` +
    `(${Date.now() - t0} ms)`);
  if (turn === 1) {
    assert.ok(usage.input_tokens > 4000, `the Codex-sized prompt is only ${usage.input_tokens} tokens`);
  } else {
    assert.ok(usage.input_tokens > previousInputTokens, "the history grows");
    assert.ok(cached >= MIN_REUSE * previousInputTokens,
      `turn ${turn}: only ${cached} of the previous turn's ${previousInputTokens} prompt tokens were reused`);
  }
  previousInputTokens = usage.input_tokens;

  // Codex appends the output items verbatim, then the results of any calls.
  input.push(...completed.output);
  let calls = completed.output.filter((i) => i.type === "function_call");
  if (calls.length === 0) {
    // The random tiny model rarely calls tools: script the call Codex would have made.
    const call = { type: "function_call", call_id: `call_scripted_${turn}`, name: "exec_command",
      arguments: JSON.stringify({ cmd: `ls -la src/part${turn}` }) };
    input.push(call);
    calls = [call];
  }
  for (const call of calls) {
    input.push({ type: "function_call_output", call_id: call.call_id,
      output: `total ${turn}\n` + Array.from({ length: 8 }, (_, i) => `-rw-r--r-- 1 user user ${100 * i} file_${turn}_${i}.txt`).join("\n") });
  }
}
console.log("ok   Codex-shaped session reuses the previous prompt every turn");
