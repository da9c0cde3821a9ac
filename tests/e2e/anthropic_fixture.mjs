// Request bodies shaped like Claude Code's (see shared/design/AGENT-CLIENTS.md):
// a 3-block system prompt whose first block is a per-conversation billing
// header, 24 tools with long descriptions and JSON Schema 2020-12 input
// schemas, a first user message made of a <system-reminder> block and the
// prompt, then a role "system" message. Deterministic (seeded), ~20K tokens.

const WORDS = ("the a file path command output error result value search pattern directory project code " +
  "function test build server request response token model cache prefix context message tool user " +
  "assistant system reminder edit write read list glob grep bash shell process timeout background " +
  "notebook cell todo task agent plan review commit branch diff status line number offset limit " +
  "when you must should never always only use this to with for and or not if before after each").split(" ");

// A deterministic pseudo-random text of `num_words` words.
export function prose(seed, num_words) {
  let state = seed >>> 0 || 1;
  const out = [];
  for (let i = 0; i < num_words; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out.push(WORDS[state % WORDS.length]);
    if (i % 17 === 16) out.push(".\n");
  }
  return out.join(" ");
}

const TOOL_NAMES = ["Task", "Bash", "Glob", "Grep", "ExitPlanMode", "Read", "Edit", "MultiEdit", "Write",
  "NotebookEdit", "WebFetch", "TodoWrite", "WebSearch", "BashOutput", "KillShell", "SlashCommand",
  "ListMcpResources", "ReadMcpResource", "AskUserQuestion", "Skill", "EnterPlanMode", "TaskOutput",
  "LSP", "ToolSearch"];

function input_schema(i) {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      command: { type: "string", description: prose(100 + i, 30), minLength: 1 },
      timeout: { type: "number", exclusiveMinimum: 0, maximum: 600000, description: "Timeout in milliseconds" },
      mode: { type: "string", enum: ["fast", "careful", "plan"], default: "fast" },
      path: { type: "string", pattern: "^/", format: "uri-reference" },
      options: {
        type: "object",
        properties: { recursive: { type: "boolean" }, depth: { type: "integer", minimum: 0, maximum: 10 } },
        additionalProperties: false,
      },
      targets: { type: "array", items: { type: "string" }, minItems: 1, maxItems: 8 },
      kind: { anyOf: [{ const: "file" }, { const: "directory" }, { type: "null" }] },
      labels: { type: "object", propertyNames: { pattern: "^[a-z]+$" }, additionalProperties: { type: "string" } },
    },
    required: ["command"],
    additionalProperties: false,
  };
}

export const TOOLS = TOOL_NAMES.map((name, i) => ({
  name,
  description: prose(1 + i, 520),
  input_schema: input_schema(i),
}));

export function system_blocks(conversation_id) {
  return [
    { type: "text", text: `x-anthropic-billing-header: cc_version=2.1.197.${conversation_id}; cc_entrypoint=sdk-cli;` },
    { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: "ephemeral" } },
    { type: "text", text: prose(7, 1000), cache_control: { type: "ephemeral" } },
  ];
}

// The first request of a conversation: reminder + prompt, then a role "system" message.
export function first_messages(prompt) {
  return [
    { role: "user", content: [
      { type: "text", text: `<system-reminder>\n${prose(11, 120)}\n</system-reminder>` },
      { type: "text", text: prompt, cache_control: { type: "ephemeral" } },
    ] },
    { role: "system", content: prose(13, 1050) },
  ];
}

// The next turn: the assistant turn repeated verbatim (plus a tool call when it made
// none, as an agent loop would), then its tool result; cache_control moves to the end.
export function next_messages(messages, response, turn) {
  const out = structuredClone(messages);
  for (const m of out) {
    if (Array.isArray(m.content)) for (const b of m.content) delete b.cache_control;
  }
  const content = response.content.map((b) => structuredClone(b));
  let tool_use = content.find((b) => b.type === "tool_use");
  if (!tool_use) {
    tool_use = { type: "tool_use", id: `toolu_turn${turn}`, name: "Bash", input: { command: `ls step${turn}` } };
    content.push(tool_use);
  }
  out.push({ role: "assistant", content });
  out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: tool_use.id, content: prose(200 + turn, 150),
                                        is_error: false, cache_control: { type: "ephemeral" } }] });
  return out;
}
