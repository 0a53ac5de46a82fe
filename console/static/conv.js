// Conversations: POST /v1/responses, each turn continuing the last with
// previous_response_id, so that the gateway, not the page, keeps the
// history. Every turn shows its response id.
import { apiJSON, el, showError, errorText, fillSelect, ctrlEnter, ApiError } from './api.js';

const $ = (id) => document.getElementById(id);
let previous = '';
let busy = false;

export function setModels(ms) {
  const list = ms.filter((m) => (m.supported_endpoint_types || []).includes('compat-response'));
  fillSelect($('conv-model'), list.map((m) => ({ value: m.id, label: m.id + (m.reasoning ? ' (reasoning)' : '') })));
}

function setPrevious(id) {
  previous = id;
  $('conv-previous').textContent = id || 'nothing (a new conversation)';
}

// outputOf splits a response's output into its text and its reasoning.
function outputOf(resp) {
  let text = '';
  let reasoning = '';
  for (const item of resp.output || []) {
    if (item.type === 'message') {
      for (const c of item.content || []) if (c.type === 'output_text') text += c.text;
    } else if (item.type === 'reasoning') {
      for (const s of [...(item.summary || []), ...(item.content || [])]) if (s.text) reasoning += s.text;
    }
  }
  return { text, reasoning };
}

async function send(ev) {
  ev.preventDefault();
  const input = $('conv-input');
  const text = input.value.trim();
  const model = $('conv-model').value;
  if (!text || !model || busy) return;
  busy = true;
  $('conv-send').disabled = true;
  showError($('conv-error'), null);
  const log = $('conv-log');
  log.append(el('li', { class: 'msg user' }, el('span', { class: 'who' }, 'You'), el('div', { class: 'text' }, text)));
  input.value = '';
  const body = { model, input: text };
  if (previous) body.previous_response_id = previous;
  try {
    const resp = await apiJSON('/v1/responses', { method: 'POST', json: body });
    const { text: out, reasoning } = outputOf(resp);
    const u = resp.usage;
    log.append(el('li', { class: 'msg assistant', 'data-response-id': resp.id },
      el('span', { class: 'who' }, `${resp.model} · `, el('code', { class: 'response-id' }, resp.id)),
      reasoning ? el('details', { class: 'reasoning', open: true }, el('summary', {}, 'Reasoning'), el('div', { class: 'reasoning-text' }, reasoning)) : null,
      el('div', { class: 'text' }, out),
      el('div', { class: 'meta' }, previous ? `continues ${previous}` : 'starts the conversation')));
    if (u) $('conv-usage').textContent = `Usage: ${u.input_tokens} input + ${u.output_tokens} output = ${u.total_tokens} tokens`;
    if (resp.status === 'failed' || resp.error) {
      const e = resp.error || {};
      showError($('conv-error'), new ApiError(0, e.message || 'The response failed.', '', e.code));
    }
    setPrevious(resp.id);
  } catch (err) {
    log.append(el('li', { class: 'msg assistant failed' }, el('span', { class: 'who' }, model), el('div', { class: 'meta' }, errorText(err))));
    showError($('conv-error'), err);
  } finally {
    busy = false;
    $('conv-send').disabled = false;
    log.scrollTop = log.scrollHeight;
  }
}

export function init() {
  $('conv-form').addEventListener('submit', send);
  ctrlEnter($('conv-input'));
  $('conv-new').addEventListener('click', () => {
    setPrevious('');
    $('conv-log').replaceChildren();
    $('conv-usage').textContent = '';
    showError($('conv-error'), null);
  });
}
