// Conversations: POST /v1/responses, streamed as typed events, each turn
// continuing the last with previous_response_id, so that the gateway, not
// the page, keeps the history. Every turn shows its response id; a turn
// that fails or is stopped is not continued from.
import { api, sse, el, showError, errorText, fillSelect, ctrlEnter, appendText, scrollToEnd, ApiError } from './api.js';

const $ = (id) => document.getElementById(id);
let previous = '';
let controller = null;

export function setModels(ms) {
  const list = ms.filter((m) => (m.supported_endpoint_types || []).includes('compat-response'));
  fillSelect($('conv-model'), list.map((m) => ({ value: m.id, label: m.id + (m.reasoning ? ' (reasoning)' : '') })));
}

function setPrevious(id) {
  previous = id;
  $('conv-previous').textContent = id || 'nothing (a new conversation)';
}

function turn(model) {
  const li = el('li', { class: 'msg assistant', 'aria-busy': 'true' },
    el('span', { class: 'who' }, `${model} · `, el('code', { class: 'response-id' }, '…')),
    el('details', { class: 'reasoning', open: true, hidden: true }, el('summary', {}, 'Reasoning'), el('div', { class: 'reasoning-text' })),
    el('div', { class: 'text' }),
    el('div', { class: 'meta' }));
  $('conv-log').append(li);
  return li;
}

async function send(ev) {
  ev.preventDefault();
  const input = $('conv-input');
  const text = input.value.trim();
  const model = $('conv-model').value;
  if (!text || !model || controller) return;
  controller = new AbortController();
  $('conv-send').disabled = true;
  $('conv-stop').disabled = false;
  showError($('conv-error'), null);
  const log = $('conv-log');
  log.append(el('li', { class: 'msg user' }, el('span', { class: 'who' }, 'You'), el('div', { class: 'text' }, text)));
  input.value = '';
  const body = { model, input: text, stream: true };
  if (previous) body.previous_response_id = previous;
  const li = turn(model);
  const q = (sel) => li.querySelector(sel);
  let id = '';
  let final = null;
  try {
    const res = await api('/v1/responses', { method: 'POST', json: body, signal: controller.signal });
    for await (const { event, data } of sse(res)) {
      if (data === '[DONE]') break;
      const e = JSON.parse(data);
      switch (event) {
        case 'response.created':
          id = e.response.id;
          li.dataset.responseId = id;
          q('.response-id').textContent = id;
          q('.meta').textContent = previous ? `continues ${previous}` : 'starts the conversation';
          break;
        case 'response.output_text.delta':
          appendText(q('.text'), e.delta);
          break;
        case 'response.reasoning_summary_text.delta':
          q('.reasoning').hidden = false;
          appendText(q('.reasoning-text'), e.delta);
          break;
        case 'response.completed':
        case 'response.incomplete':
        case 'response.failed':
          final = e.response;
          break;
        case 'error':
          throw new ApiError(0, (e.error || e).message, '', (e.error || e).code);
      }
      scrollToEnd(log);
    }
    if (!final) throw new ApiError(0, 'The stream ended without a final event.');
    const u = final.usage;
    if (u) $('conv-usage').textContent = `Usage: ${u.input_tokens} input + ${u.output_tokens} output = ${u.total_tokens} tokens`;
    if (final.status === 'failed') {
      const fe = final.error || {};
      throw new ApiError(0, fe.message || 'The response failed.', '', fe.code);
    }
    if (final.status === 'incomplete') {
      q('.meta').textContent += ` · incomplete: ${(final.incomplete_details || {}).reason || 'unknown'}`;
    }
    setPrevious(id);
  } catch (err) {
    if (err.name === 'AbortError') {
      q('.meta').textContent += (q('.meta').textContent ? ' · ' : '') + 'Stopped.';
    } else {
      li.classList.add('failed');
      q('.meta').textContent += (q('.meta').textContent ? ' · ' : '') + errorText(err);
      showError($('conv-error'), err);
    }
  } finally {
    li.removeAttribute('aria-busy');
    controller = null;
    $('conv-send').disabled = false;
    $('conv-stop').disabled = true;
    scrollToEnd(log);
  }
}

export function init() {
  $('conv-form').addEventListener('submit', send);
  ctrlEnter($('conv-input'));
  $('conv-stop').addEventListener('click', () => controller && controller.abort());
  $('conv-new').addEventListener('click', () => {
    if (controller) controller.abort();
    setPrevious('');
    $('conv-log').replaceChildren();
    $('conv-usage').textContent = '';
    showError($('conv-error'), null);
  });
}
