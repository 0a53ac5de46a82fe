// Conversations: POST /v1/responses, streamed as typed events, each turn
// continuing the last with previous_response_id, so that the gateway, not
// the page, keeps the history. Every turn shows its response id; a turn
// that fails or is stopped is not continued from.
//
// A background turn ("background": true, "stream": true, "store": true)
// is run by the gateway's workers: the turn shows its status and the
// sequence number of the last event seen. Stop only detaches the page
// from its stream (the run goes on); Resume reattaches with GET
// /v1/responses/{id}?stream=true&starting_after=<last sequence number>,
// so that each event is appended once; Poll shows the stored status (GET
// /v1/responses/{id}); Cancel stops the run (POST /v1/responses/{id}/cancel).
import { api, apiJSON, sse, el, showError, errorText, fillSelect, ctrlEnter, appendText, scrollToEnd, composerEnd, ApiError } from './api.js';

const $ = (id) => document.getElementById(id);
let previous = '';
let controller = null; // the stream the page reads, if any

// The statuses after which a background response changes no more.
const ENDED = new Set(['completed', 'cancelled', 'failed', 'incomplete']);

export function setModels(ms) {
  const list = ms.filter((m) => (m.supported_endpoint_types || []).includes('compat-response'));
  fillSelect($('conv-model'), list.map((m) => ({ value: m.id, label: m.id + (m.reasoning ? ' (reasoning)' : '') })));
}

function setPrevious(id) {
  previous = id;
  $('conv-previous').textContent = id || 'nothing (a new conversation)';
}

function turn(model, background) {
  const li = el('li', { class: 'msg assistant', 'aria-busy': 'true' },
    el('span', { class: 'who' }, `${model} · `, el('code', { class: 'response-id' }, '…')),
    background && el('p', { class: 'bg-state' },
      'Background: ', el('output', { class: 'status' }, 'queued'),
      ' · last event ', el('output', { class: 'seq', 'aria-live': 'off' }, '–')),
    el('details', { class: 'reasoning', open: true, hidden: true }, el('summary', {}, 'Reasoning'), el('div', { class: 'reasoning-text' })),
    el('div', { class: 'text' }),
    el('div', { class: 'meta' }));
  $('conv-log').append(li);
  return li;
}

// note adds s to the turn's line of notes.
function note(li, s) {
  const m = li.querySelector('.meta');
  m.textContent += (m.textContent ? ' · ' : '') + s;
}

// busy marks the page as reading a stream (or not).
function busy(on) {
  $('conv-send').disabled = on;
  $('conv-stop').disabled = !on;
  for (const b of document.querySelectorAll('#conv-log .bg-resume')) b.disabled = on || b.dataset.ended === 'true';
}

// read reads the response stream res into the turn t ({li, id, seq,
// status}), and answers the final response, or null when the stream ended
// without one (a cancelled background run's does).
async function read(t, res) {
  const q = (sel) => t.li.querySelector(sel);
  const log = $('conv-log');
  let final = null;
  for await (const { event, data } of sse(res)) {
    if (data === '[DONE]') break;
    const e = JSON.parse(data);
    if (t.background && typeof e.sequence_number === 'number') {
      t.seq = e.sequence_number;
      q('.seq').textContent = String(t.seq);
    }
    if (t.background && e.response && e.response.status) setStatus(t, e.response.status);
    switch (event) {
      case 'response.created':
        if (!t.id) {
          t.id = e.response.id;
          t.li.dataset.responseId = t.id;
          q('.response-id').textContent = t.id;
          note(t.li, t.previous ? `continues ${t.previous}` : 'starts the conversation');
          if (t.background) addControls(t);
        }
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
  return final;
}

function setStatus(t, status) {
  t.status = status;
  t.li.querySelector('.status').textContent = status;
  t.li.dataset.status = status;
}

// addControls gives a background turn its Cancel, Resume and Poll buttons.
function addControls(t) {
  const b = (label, cls, fn) => el('button', { type: 'button', class: `secondary ${cls}`, onclick: fn,
    'aria-label': `${label} ${t.id}` }, label);
  t.cancel = b('Cancel', 'bg-cancel', () => cancel(t));
  t.resume = b('Resume', 'bg-resume', () => resume(t));
  t.resume.disabled = true;
  t.poll = b('Poll', 'bg-poll', () => poll(t));
  t.li.querySelector('.bg-state').after(el('div', { class: 'row bg-controls' }, t.cancel, t.resume, t.poll));
}

// ended marks a background turn as over: nothing to cancel or resume.
function ended(t) {
  t.li.classList.remove('detached');
  t.li.querySelector('.polled')?.remove();
  if (!t.cancel) return;
  t.cancel.disabled = true;
  t.resume.disabled = true;
  t.resume.dataset.ended = 'true';
}

// resume reattaches the page to the stream of t's background run, after
// the last event it saw.
function resume(t) {
  if (controller) return;
  note(t.li, `resumed after event ${t.seq}`);
  attach(t, (signal) => api(`/v1/responses/${encodeURIComponent(t.id)}?stream=true&starting_after=${t.seq}`, { signal }));
}

// attach reads the stream that open(signal) answers into the turn t, and
// shows how the turn ended: its final response, or, for a background
// turn, the stored status when the stream ended without one, or that
// the page was detached from a run that goes on.
async function attach(t, open) {
  if (controller) return;
  controller = new AbortController();
  busy(true);
  showError($('conv-error'), null);
  t.li.setAttribute('aria-busy', 'true');
  t.li.classList.remove('detached');
  const q = (sel) => t.li.querySelector(sel);
  try {
    let final = await read(t, await open(controller.signal));
    if (!final && t.background && t.id) {
      // A cancelled run's stream ends so; a stream that a proxy closed
      // early ends so too, while the run goes on.
      final = await apiJSON(`/v1/responses/${encodeURIComponent(t.id)}`);
      setStatus(t, final.status);
      if (!ENDED.has(final.status)) throw new Error('it ended before the run did');
    }
    if (!final) throw new ApiError(0, 'The stream ended without a final event.');
    if (t.background) ended(t);
    const u = final.usage;
    if (u) $('conv-usage').textContent = `Usage: ${u.input_tokens} input + ${u.output_tokens} output = ${u.total_tokens} tokens`;
    if (final.status === 'failed') {
      const fe = final.error || {};
      throw new ApiError(0, fe.message || 'The response failed.', '', fe.code);
    }
    if (final.status === 'incomplete') note(t.li, `incomplete: ${(final.incomplete_details || {}).reason || 'unknown'}`);
    if (final.status === 'cancelled') note(t.li, 'cancelled');
    else if (t.li === $('conv-log').lastElementChild) setPrevious(t.id);
  } catch (err) {
    if (t.background && t.id && !(err instanceof ApiError) && !ENDED.has(t.status)) {
      // Stopped, or the stream dropped: the run goes on, to be resumed.
      t.li.classList.add('detached');
      note(t.li, err.name === 'AbortError' ? 'Detached: the run goes on.' : `The stream dropped (${err.message}): the run goes on.`);
    } else if (err.name === 'AbortError') {
      note(t.li, 'Stopped.');
    } else {
      if (t.background) ended(t);
      t.li.classList.add('failed');
      note(t.li, errorText(err));
      showError($('conv-error'), err);
    }
  } finally {
    t.li.removeAttribute('aria-busy');
    controller = null;
    busy(false);
    scrollToEnd($('conv-log'));
  }
}

// cancel cancels the background run of t. A page attached to its stream
// sees the stream end, then the stored status; a detached one shows the
// answer: the status, and the text written until the cancel.
async function cancel(t) {
  t.cancel.disabled = true;
  try {
    const r = await apiJSON(`/v1/responses/${encodeURIComponent(t.id)}/cancel`, { method: 'POST' });
    // A page attached to the stream learns the end from it.
    if (t.li.hasAttribute('aria-busy') || ENDED.has(t.status)) return;
    setStatus(t, r.status);
    t.li.querySelector('.text').textContent = outputText(r);
    ended(t);
    note(t.li, r.status);
  } catch (err) {
    t.cancel.disabled = false;
    showError($('conv-error'), err);
  }
}

// poll shows the stored status of t's background response.
async function poll(t) {
  try {
    const r = await apiJSON(`/v1/responses/${encodeURIComponent(t.id)}`);
    t.li.querySelector('.polled')?.remove();
    const when = new Date().toLocaleTimeString();
    t.li.querySelector('.bg-state').append(el('span', { class: 'polled' }, ` · polled at ${when}: ${r.status}`));
    if (!t.li.hasAttribute('aria-busy')) setStatus(t, r.status);
  } catch (err) {
    showError($('conv-error'), err);
  }
}

// outputText is the text of the message items of response r.
function outputText(r) {
  return (r.output || []).filter((it) => it.type === 'message')
    .flatMap((it) => it.content || []).filter((c) => c.type === 'output_text').map((c) => c.text).join('');
}

function send(ev) {
  ev.preventDefault();
  const input = $('conv-input');
  const text = input.value.trim();
  const model = $('conv-model').value;
  if (!text || !model || controller) return;
  const background = $('conv-background').checked;
  $('conv-log').append(el('li', { class: 'msg user' }, el('span', { class: 'who' }, 'You'), el('div', { class: 'text' }, text)));
  input.value = '';
  const body = { model, input: text, stream: true };
  if (background) Object.assign(body, { background: true, store: true });
  if (previous) body.previous_response_id = previous;
  const t = { li: turn(model, background), background, previous, id: '', seq: -1, status: '' };
  if (background) setStatus(t, 'queued');
  attach(t, (signal) => api('/v1/responses', { method: 'POST', json: body, signal }));
}

export function init() {
  composerEnd('conv', 'conv-new', 'New conversation', () => controller && controller.abort(), () => {
    setPrevious('');
    $('conv-log').replaceChildren();
  });
  $('conv-form').addEventListener('submit', send);
  ctrlEnter($('conv-input'));
}
