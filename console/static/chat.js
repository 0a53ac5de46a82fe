// Chat: POST /v1/chat/completions with stream: true. The reply grows
// token by token; Stop aborts the fetch (the gateway sees the client go and
// cancels the generation); the last chunk carries the usage
// (stream_options.include_usage); reasoning_content is shown apart.
import { api, sse, el, showError, errorText, fillSelect, ctrlEnter, appendText, scrollToEnd, composerEnd, ApiError } from './api.js';

const $ = (id) => document.getElementById(id);
let sent = []; // the messages of the chat so far (the history sent with each request)
let controller = null;
let models = [];

export function setModels(ms) {
  models = ms.filter((m) => (m.supported_endpoint_types || []).includes('compat'));
  fillSelect($('chat-model'), models.map((m) => ({ value: m.id, label: m.id + (m.reasoning ? ' (reasoning)' : '') })));
}

function bubble(role, who) {
  const reasoning = el('details', { class: 'reasoning', open: true, hidden: true },
    el('summary', {}, 'Reasoning'), el('div', { class: 'reasoning-text' }));
  const li = el('li', { class: 'msg ' + role },
    el('span', { class: 'who' }, who),
    role === 'assistant' ? reasoning : null,
    el('div', { class: 'text' }),
    el('div', { class: 'meta' }));
  $('chat-log').append(li);
  return li;
}

function scroll() {
  scrollToEnd($('chat-log'));
}

async function send(ev) {
  ev.preventDefault();
  const input = $('chat-input');
  const text = input.value.trim();
  const model = $('chat-model').value;
  if (!text || !model || controller) return;
  showError($('chat-error'), null);
  $('chat-usage').textContent = '';
  const msgs = [];
  const system = $('chat-system').value.trim();
  if (system) msgs.push({ role: 'system', content: system });
  const user = { role: 'user', content: text };
  bubble('user', 'You').querySelector('.text').textContent = text;
  input.value = '';
  const li = bubble('assistant', model);
  li.setAttribute('aria-busy', 'true');
  const out = li.querySelector('.text');
  const reasoning = li.querySelector('.reasoning');
  const reasoningText = li.querySelector('.reasoning-text');
  controller = new AbortController();
  $('chat-send').disabled = true;
  $('chat-stop').disabled = false;
  let content = '';
  let finish = '';
  try {
    const res = await api('/v1/chat/completions', {
      method: 'POST',
      json: { model, messages: [...msgs, ...sent, user], stream: true, stream_options: { include_usage: true } },
      signal: controller.signal,
    });
    for await (const { data } of sse(res)) {
      if (data === '[DONE]') break;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new ApiError(0, chunk.error.message, chunk.error.type, chunk.error.code);
      for (const c of chunk.choices || []) {
        const d = c.delta || {};
        if (d.reasoning_content) {
          reasoning.hidden = false;
          appendText(reasoningText, d.reasoning_content);
        }
        if (d.content) {
          content += d.content;
          appendText(out, d.content);
        }
        if (c.finish_reason) finish = c.finish_reason;
      }
      if (chunk.usage) {
        const u = chunk.usage;
        const r = u.completion_tokens_details && u.completion_tokens_details.reasoning_tokens;
        $('chat-usage').textContent = `Usage: ${u.prompt_tokens} prompt + ${u.completion_tokens} completion = ${u.total_tokens} tokens` +
          (r ? ` (${r} reasoning)` : '');
      }
      scroll();
    }
    li.querySelector('.meta').textContent = finish ? 'finish reason: ' + finish : '';
    sent.push(user, { role: 'assistant', content });
  } catch (err) {
    if (err.name === 'AbortError') {
      li.querySelector('.meta').textContent = 'Stopped.';
      if (content) sent.push(user, { role: 'assistant', content });
    } else {
      li.classList.add('failed');
      li.querySelector('.meta').textContent = errorText(err);
      showError($('chat-error'), err);
    }
  } finally {
    li.removeAttribute('aria-busy');
    controller = null;
    $('chat-send').disabled = false;
    $('chat-stop').disabled = true;
    scroll();
  }
}

export function init() {
  composerEnd('chat', 'chat-clear', 'New chat', () => controller && controller.abort(), () => {
    sent = [];
    $('chat-log').replaceChildren();
  });
  $('chat-form').addEventListener('submit', send);
  ctrlEnter($('chat-input'));
}
