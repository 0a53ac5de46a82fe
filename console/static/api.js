// The console's only way to the network: the gateway's public API (same
// origin, Authorization: Bearer <API key>) and the admin API (the
// configured admin URL, Authorization: Bearer <admin key>). Keys live in
// sessionStorage: they are gone when the tab closes, and never in a cookie.

const KEY = 'gatewaykit.key';
const ADMIN_KEY = 'gatewaykit.adminKey';

export const keys = {
  get api() { return sessionStorage.getItem(KEY) || ''; },
  set api(v) { v ? sessionStorage.setItem(KEY, v) : sessionStorage.removeItem(KEY); },
  get admin() { return sessionStorage.getItem(ADMIN_KEY) || ''; },
  set admin(v) { v ? sessionStorage.setItem(ADMIN_KEY, v) : sessionStorage.removeItem(ADMIN_KEY); },
};

// ApiError is an error reply, with the API's own words: its status,
// message, type and code.
export class ApiError extends Error {
  constructor(status, message, type, code) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type || '';
    this.code = code || '';
  }
}

// errorFrom reads an error reply: {"error":{message,type,code}}, or the
// flat {code,message} of the video create paths.
export async function errorFrom(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const e = body && typeof body.error === 'object' && body.error ? body.error : body;
  const message = (e && e.message) || res.statusText || 'request failed';
  const err = new ApiError(res.status, message, e && e.type, e && (e.code || (body && body.code)));
  err.retryAfter = Number(res.headers.get('Retry-After')) || 0;
  return err;
}

// errorText words err for a person: the status, the code and the API's
// message, as the API sent them.
export function errorText(err) {
  if (err instanceof ApiError) {
    const code = err.code || err.type;
    const head = [err.status || '', code].filter(Boolean).join(' ');
    return head ? `${head}: ${err.message}` : err.message;
  }
  if (err && err.name === 'AbortError') return 'Stopped.';
  return `Network error: ${err && err.message ? err.message : err}`;
}

async function send(url, key, opts = {}) {
  const headers = new Headers(opts.headers || {});
  if (key) headers.set('Authorization', 'Bearer ' + key);
  let body = opts.body;
  if (opts.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(url, { method: opts.method || 'GET', headers, body, signal: opts.signal });
  if (!res.ok) throw await errorFrom(res);
  return res;
}

// api calls the gateway at path (such as /v1/models) with the API key.
export function api(path, opts) { return send(path, keys.api, opts); }

// apiJSON calls the gateway and decodes the JSON reply.
export async function apiJSON(path, opts) { return (await api(path, opts)).json(); }

let adminBase = '';
export function setAdminURL(u) { adminBase = u || ''; }
export function adminURL() { return adminBase; }

// admin calls the admin API at path (such as /admin/v1/keys) with the
// admin key; a 204 reply decodes as null.
export async function admin(path, opts) {
  const res = await send(adminBase + path, keys.admin, opts);
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

// sse yields the server-sent events of res: {event, data}.
export async function* sse(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    for (;;) {
      const m = /\r\n\r\n|\n\n|\r\r/.exec(buf);
      if (!m) break;
      const block = buf.slice(0, m.index);
      buf = buf.slice(m.index + m[0].length);
      let event = 'message';
      const data = [];
      for (const line of block.split(/\r\n|\n|\r/)) {
        if (line === '' || line.startsWith(':')) continue;
        const c = line.indexOf(':');
        const field = c < 0 ? line : line.slice(0, c);
        let v = c < 0 ? '' : line.slice(c + 1);
        if (v.startsWith(' ')) v = v.slice(1);
        if (field === 'event') event = v;
        else if (field === 'data') data.push(v);
      }
      if (data.length) yield { event, data: data.join('\n') };
    }
  }
}

// el builds an element: el('td', {class: 'x'}, 'text', child, …).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k in e && typeof v !== 'string') e[k] = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

// composerEnd ends the composer form of the view named prefix (chat,
// conv), as the two views have it: in the form, the Send, Stop and New
// buttons (ids prefix-send, prefix-stop and newID, the last labelled
// newLabel); after it, the usage line and the error (prefix-usage,
// prefix-error). Stop calls stop; New calls stop, then reset, and clears
// the usage and the error.
export function composerEnd(prefix, newID, newLabel, stop, reset) {
  const usage = el('p', { id: prefix + '-usage', class: 'usage', role: 'status' });
  const error = el('p', { id: prefix + '-error', class: 'error', role: 'alert', hidden: true });
  const form = document.getElementById(prefix + '-form');
  form.append(el('div', { class: 'row' },
    el('button', { type: 'submit', id: prefix + '-send' }, 'Send'),
    el('button', { type: 'button', id: prefix + '-stop', class: 'secondary', disabled: true, onclick: stop }, 'Stop'),
    el('button', {
      type: 'button', id: newID, class: 'secondary', onclick: () => {
        stop();
        reset();
        usage.textContent = '';
        showError(error, null);
      },
    }, newLabel)));
  form.after(usage, error);
}

// appendText appends s to the text of element e. A streamed reply grows
// one text node, so that each piece costs the browser that piece, not the
// whole text set (and laid out) again.
export function appendText(e, s) {
  const last = e.lastChild;
  if (last && last.nodeType === Node.TEXT_NODE) last.appendData(s);
  else e.append(s);
}

// scrollToEnd scrolls e to its end at the next frame, once however often
// it is asked before then: reading its height lays the page out, which a
// stream must not make the browser do for every piece.
const scrolling = new Set();
export function scrollToEnd(e) {
  if (scrolling.has(e)) return;
  scrolling.add(e);
  requestAnimationFrame(() => {
    scrolling.delete(e);
    e.scrollTop = e.scrollHeight;
  });
}

// showError shows err in the alert element p, or hides p when err is null.
export function showError(p, err) {
  if (!err) { p.hidden = true; p.textContent = ''; return; }
  p.textContent = errorText(err);
  p.hidden = false;
}

// showPage shows a page of a list (list.data, list.last_id,
// list.has_more) in the body of table, each item a row that rowOf makes:
// in place of the rows there, or after them when more. It shows the
// button moreButton while more items follow, and returns the id to list
// the next page after ('' for none).
export function showPage(list, more, table, moreButton, rowOf) {
  const body = table.tBodies[0];
  const rows = (list.data || []).map(rowOf);
  if (more) body.append(...rows); else body.replaceChildren(...rows);
  moreButton.hidden = !list.has_more;
  return list.last_id || '';
}

// confirmButton returns a button that acts on its second press: the
// first shows confirmLabel, and leaving the button disarms it.
export function confirmButton(label, confirmLabel, action) {
  const b = el('button', { type: 'button', class: 'danger' }, label);
  b.addEventListener('click', () => {
    if (b.dataset.armed) { action(); return; }
    b.dataset.armed = 'true';
    b.textContent = confirmLabel;
    b.addEventListener('blur', () => { delete b.dataset.armed; b.textContent = label; }, { once: true });
  });
  return b;
}

// ctrlEnter makes Ctrl+Enter (or Cmd+Enter) in textarea submit its form.
export function ctrlEnter(textarea) {
  textarea.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      textarea.form.requestSubmit();
    }
  });
}

// fillSelect replaces the options of select with items ({value, label}),
// keeping the selected value when it is still there.
export function fillSelect(select, items) {
  const keep = select.value;
  select.replaceChildren(...items.map((it) => el('option', { value: it.value }, it.label ?? it.value)));
  if (items.some((it) => it.value === keep)) select.value = keep;
}

export function fmtTime(unix) {
  if (!unix) return '';
  return new Date(unix * 1000).toLocaleString();
}
