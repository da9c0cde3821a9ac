// The Playground: a minimal multi-turn chat against POST /v1/chat/completions with
// stream: true. The SSE stream is read through fetch + ReadableStream (EventSource can
// neither POST nor send the Authorization header). Reasoning and tool calls are shown
// apart from the answer.

import { el, setText, int, secs, errorText } from './util.js';
import { request, errorMessage, getJSON, AuthError, NetError } from './api.js';

// Yields the data of each server-sent event. A trailing "\r" is held back until the next
// chunk: it may be the first half of a "\r\n" line ending.
export async function* sseData(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let pending = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let text = pending + value;
      pending = '';
      if (text.endsWith('\r')) {
        pending = '\r';
        text = text.slice(0, -1);
      }
      buf += text.replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
          .join('\n');
        if (data) yield data;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

export class Playground {
  constructor(root, state) {
    this.state = state; // window.__consoleState.playground: counters the browser test reads
    this.log = root.querySelector('[data-pg-log]');
    this.form = root.querySelector('[data-pg-form]');
    this.input = root.querySelector('[data-pg-input]');
    this.model = root.querySelector('[data-pg-model]');
    this.maxTokens = root.querySelector('[data-pg-max-tokens]');
    this.temperature = root.querySelector('[data-pg-temperature]');
    this.sendBtn = root.querySelector('[data-pg-send]');
    this.stopBtn = root.querySelector('[data-pg-stop]');
    this.clearBtn = root.querySelector('[data-pg-clear]');
    this.errorEl = root.querySelector('[data-pg-error]');
    this.messages = [];
    this.controller = null;
    this.modelsLoaded = false;
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.send().catch((err) => this.showError(errorText(err)));
    });
    this.input.addEventListener('keydown', (e) => {
      // Enter sends, Shift+Enter is a newline (as in most chat boxes).
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.stopBtn.addEventListener('click', () => this.controller && this.controller.abort());
    this.clearBtn.addEventListener('click', () => this.clear());
    this.renderEmpty();
  }

  // The model list, from GET /v1/models (once; again after a failure).
  async loadModels() {
    if (this.modelsLoaded) return;
    const data = await getJSON('/v1/models');
    const ids = ((data && data.data) || []).map((m) => m.id).filter(Boolean);
    const keep = this.model.value;
    this.model.replaceChildren(...ids.map((id) => el('option', { value: id, text: id })));
    if (ids.includes(keep)) this.model.value = keep;
    this.model.disabled = !ids.length;
    this.modelsLoaded = true;
  }

  renderEmpty() {
    if (!this.messages.length) this.log.replaceChildren(el('p', { class: 'muted pg-empty', text: 'Send a message to start a conversation.' }));
  }

  clear() {
    if (this.controller) this.controller.abort();
    this.messages = [];
    this.showError('');
    this.renderEmpty();
    this.input.focus();
  }

  showError(text) {
    setText(this.errorEl, text);
    this.errorEl.hidden = !text;
  }

  addMessage(role, text) {
    this.log.querySelector('.pg-empty')?.remove();
    const msg = el('div', { class: `msg msg-${role}`, 'data-role': role });
    const content = el('div', { class: 'msg-content', 'data-content': '', text });
    msg.append(el('div', { class: 'msg-role', text: role }), content);
    this.log.append(msg);
    return { msg, content };
  }

  setBusy(busy) {
    this.sendBtn.disabled = busy;
    this.stopBtn.hidden = !busy;
    this.input.readOnly = busy;
  }

  async send() {
    const text = this.input.value.trim();
    if (!text || this.controller) return;
    this.showError('');
    if (!this.modelsLoaded) await this.loadModels().catch(() => {});
    this.input.value = '';
    this.messages.push({ role: 'user', content: text });
    this.addMessage('user', text);
    const out = this.addMessage('assistant', '');
    const reasoning = el('details', { class: 'reasoning', hidden: true }, el('summary', { text: 'reasoning' }), el('pre', { class: 'reasoning-text' }));
    const tools = el('div', { class: 'tool-calls', hidden: true });
    const stats = el('div', { class: 'msg-stats muted num' });
    out.content.before(reasoning, tools);
    out.msg.append(stats);
    out.content.classList.add('streaming');
    this.log.scrollTop = this.log.scrollHeight;

    const body = {
      messages: this.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      stream_options: { include_usage: true },
    };
    if (this.model.value) body.model = this.model.value;
    const maxTokens = parseInt(this.maxTokens.value, 10);
    if (maxTokens > 0) body.max_tokens = maxTokens;
    const temperature = parseFloat(this.temperature.value);
    if (Number.isFinite(temperature)) body.temperature = temperature;

    const st = this.state;
    st.busy = true;
    st.sent++;
    const controller = (this.controller = new AbortController());
    this.setBusy(true);
    const started = performance.now();
    let firstAt = null;
    let answer = '';
    let reasoningText = '';
    const calls = [];
    let finish = null;
    let usage = null;
    let failed = null;
    try {
      const res = await request('/v1/chat/completions', { method: 'POST', body, signal: controller.signal });
      if (!res.ok) throw new Error(await errorMessage(res));
      for await (const data of sseData(res.body)) {
        if (data === '[DONE]') break;
        let chunk;
        try {
          chunk = JSON.parse(data);
        } catch {
          continue; // not JSON: skip it rather than stop the answer
        }
        if (chunk.error) throw new Error(chunk.error.message || String(chunk.error));
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices && chunk.choices[0];
        if (!choice) continue;
        const d = choice.delta || {};
        if (firstAt == null && (d.content || d.reasoning_content || d.tool_calls)) firstAt = performance.now();
        if (d.reasoning_content) {
          reasoningText += d.reasoning_content;
          reasoning.hidden = false;
          setText(reasoning.lastChild, reasoningText);
          setText(reasoning.firstChild, `reasoning (${int(reasoningText.length)} chars)`);
        }
        if (Array.isArray(d.tool_calls)) {
          for (const tc of d.tool_calls) mergeToolCall(calls, tc);
          renderToolCalls(tools, calls);
        }
        if (d.content) {
          answer += d.content;
          out.content.append(d.content); // a text node per delta: the answer grows as it arrives
          st.deltas++;
          st.lastAnswerLength = answer.length;
        }
        if (choice.finish_reason) finish = choice.finish_reason;
        this.log.scrollTop = this.log.scrollHeight;
      }
    } catch (e) {
      if (e && e.name === 'AbortError') finish = 'stopped';
      else if (e instanceof AuthError) failed = 'Sign in with the API key first.';
      else if (e instanceof NetError) failed = 'The server cannot be reached.';
      else failed = errorText(e);
    } finally {
      this.controller = null;
      this.setBusy(false);
      out.content.classList.remove('streaming');
      st.busy = false;
    }
    if (failed) {
      this.showError(failed);
      st.errors++;
    }
    if (!answer && !reasoningText && !calls.length && !failed) out.content.append(el('span', { class: 'muted', text: '(empty answer)' }));
    const elapsed = (performance.now() - started) / 1000;
    const bits = [];
    if (finish) bits.push(`finish: ${finish}`);
    if (usage) bits.push(`${int(usage.prompt_tokens)} prompt + ${int(usage.completion_tokens)} output tokens`);
    if (firstAt != null) bits.push(`first token ${secs((firstAt - started) / 1000)}`);
    bits.push(`total ${secs(elapsed)}`);
    setText(stats, bits.join(' · '));
    // Keep the turn (even a partial one) so the next message continues the conversation.
    if (answer || reasoningText || calls.length) this.messages.push({ role: 'assistant', content: answer });
    else this.messages.pop(); // nothing came back: drop the unanswered user turn
    st.completed++;
    st.lastFinish = finish;
    st.lastError = failed;
    this.input.focus();
  }
}

// Streamed tool calls arrive in pieces keyed by index: the id and name once, the arguments
// as string fragments.
function mergeToolCall(calls, tc) {
  const i = tc.index ?? calls.length;
  const c = (calls[i] ||= { id: '', name: '', arguments: '' });
  if (tc.id) c.id = tc.id;
  if (tc.function?.name) c.name += tc.function.name;
  if (tc.function?.arguments) c.arguments += tc.function.arguments;
}

function renderToolCalls(box, calls) {
  box.hidden = false;
  box.replaceChildren(
    el('div', { class: 'tool-calls-title', text: 'tool calls' }),
    ...calls.filter(Boolean).map((c) => el('pre', { class: 'tool-call', 'data-tool-call': c.name }, `${c.name || '?'}(${c.arguments})`)),
  );
}
