// Video studio: the two create paths (POST /v1/videos as JSON or
// multipart/form-data, POST /v1/vendorai/videos), with controls that follow
// the chosen model's capabilities from GET /v1/models; a progress bar while
// GET /v1/videos/{id} is polled; the video and its thumbnail fetched from
// GET /v1/videos/{id}/content with the Authorization header and shown from
// object URLs; the list of earlier tasks, with download and delete.
import { api, apiJSON, el, showError, showPage, confirmButton, fillSelect, fmtTime, ApiError } from './api.js';

const $ = (id) => document.getElementById(id);
const ALL_MODES = ['t2v', 'i2v', 'first_frame', 'first_last_frame', 'ref_image', 'video_extend', 'video_edit'];
const ANY_SECONDS = [4, 5, 8, 10, 12, 16, 20];
const ANY_SIZES = ['1280x720', '720x1280', '1920x1080', '1080x1920', '1024x1024'];
const ASPECTS = ['16:9', '9:16', '1:1', '4:3', '3:4', '3:2', '2:3', '21:9'];
const DEFAULT_PROMPT_LIMIT = 2500;
// The types of content the page makes object URLs of: what a video or
// thumbnail may be. Anything else (a page, an SVG image) could run script
// on this origin once its object URL is opened; the gateway sends it as
// application/octet-stream, and the page does not open it.
const MEDIA_TYPES = new Set(['video/mp4', 'video/webm', 'image/png', 'image/jpeg', 'image/webp']);
const POLL_MS = 1000;

// The assets of each mode: role, kind of media, and whether one is
// required (many: any number, at least one when required).
const ASSETS = {
  t2v: [],
  i2v: [{ role: 'image', kind: 'image', required: true }],
  first_frame: [{ role: 'first_frame', kind: 'image', required: true }],
  first_last_frame: [{ role: 'first_frame', kind: 'image', required: true }, { role: 'last_frame', kind: 'image', required: true }],
  ref_image: [{ role: 'reference_images', kind: 'image', required: true, many: true }],
  video_extend: [{ role: 'source_video', kind: 'video', required: true }],
  video_edit: [{ role: 'source_video', kind: 'video', required: true }, { role: 'reference_images', kind: 'image', many: true }],
};
const PROMPT_REQUIRED = new Set(['t2v', 'ref_image', 'video_edit']);

let models = [];
let pollToken = 0;
let objectURLs = [];
let after = '';

const caps = () => {
  const m = models.find((x) => x.id === $('video-model').value);
  return (m && m.video) || {};
};
const path = () => document.querySelector('input[name=video-path]:checked').value;

export function setModels(ms) {
  models = ms.filter((m) => (m.supported_endpoint_types || []).includes('compat-video'));
  fillSelect($('video-model'), models.map((m) => ({ value: m.id })));
  shape();
  if (models.length) {
    refresh(false);
  } else { // no key, or one without video models: nothing of another key stays
    pollToken++;
    forget();
    $('video-task').hidden = true;
    $('video-table').tBodies[0].replaceChildren();
    $('video-more').hidden = true;
  }
}

function options(values, dflt, required, unit = '') {
  const items = values.map((v) => ({ value: String(v), label: String(v) + unit + (String(v) === String(dflt) ? ' (default)' : '') }));
  if (!required) items.unshift({ value: '', label: dflt ? `model default (${dflt}${unit})` : 'model default' });
  return items;
}

// shape sets the controls from the model's capabilities and the path.
function shape() {
  const c = caps();
  const multimodal = path() === 'multimodal';
  $('video-general').hidden = multimodal;
  $('video-multimodal').hidden = !multimodal;
  fillSelect($('video-seconds'), options(c.seconds || ANY_SECONDS, c.default_seconds, false, ' s'));
  fillSelect($('video-size'), options(c.sizes || ANY_SIZES, c.default_size, !!c.size_required));
  if (c.size_required && c.default_size && !$('video-size').value) $('video-size').value = c.default_size;
  fillSelect($('video-mode'), (c.modes && c.modes.length ? c.modes : ALL_MODES).map((m) => ({ value: m })));
  fillSelect($('video-resolution'), options(c.resolutions || ['720p', '1080p'], '', false));
  fillSelect($('video-duration'), options(c.seconds || ANY_SECONDS, c.default_seconds, false, ' s'));
  fillSelect($('video-aspect'), options(ASPECTS, '16:9', false));
  shapeAssets();
  count();
}

function shapeAssets() {
  const box = $('video-assets');
  const rules = ASSETS[$('video-mode').value] || [];
  box.replaceChildren(el('legend', {}, 'Assets'));
  if (!rules.length) box.append(el('p', { class: 'hint' }, 'This mode takes no assets.'));
  for (const r of rules) {
    const id = 'asset-' + r.role;
    const what = r.kind === 'video' ? 'video' : 'image';
    box.append(
      el('label', { for: id + '-url' }, `${r.role} (${what} URL${r.many ? 's, one a line' : ''})${r.required ? '' : ', optional'}`),
      r.many
        ? el('textarea', { id: id + '-url', rows: 2, 'data-role': r.role, 'data-many': 'true' })
        : el('input', { id: id + '-url', type: 'url', 'data-role': r.role, placeholder: 'https://…' }),
      el('label', { for: id + '-file' }, `or ${r.many ? 'files' : 'a file'} for ${r.role}`),
      el('input', { id: id + '-file', type: 'file', accept: what + '/*', multiple: !!r.many, 'data-role': r.role }));
  }
  $('video-prompt').required = path() === 'general' || PROMPT_REQUIRED.has($('video-mode').value);
}

function count() {
  const limit = caps().max_prompt_chars || DEFAULT_PROMPT_LIMIT;
  const n = [...$('video-prompt').value].length;
  $('video-prompt-count').textContent = `${n} / ${limit} characters`;
}

const dataURI = (file) => new Promise((resolve, reject) => {
  const r = new FileReader();
  r.onload = () => resolve(r.result);
  r.onerror = () => reject(r.error);
  r.readAsDataURL(file);
});

async function assets() {
  const out = [];
  for (const r of ASSETS[$('video-mode').value] || []) {
    const text = $('asset-' + r.role + '-url').value.trim();
    for (const u of text.split(/\s+/).filter(Boolean)) out.push({ role: r.role, url: u });
    for (const f of $('asset-' + r.role + '-file').files) out.push({ role: r.role, url: await dataURI(f) });
  }
  return out;
}

async function create(ev) {
  ev.preventDefault();
  showError($('video-error'), null);
  const model = $('video-model').value;
  const prompt = $('video-prompt').value;
  $('video-create').disabled = true;
  pollToken++; // a new task replaces the one shown
  $('video-task').hidden = true;
  try {
    let task;
    if (path() === 'multimodal') {
      const body = { model, mode: $('video-mode').value };
      if (prompt) body.prompt = prompt;
      const a = await assets();
      if (a.length) body.assets = a;
      if ($('video-resolution').value) body.resolution = $('video-resolution').value;
      if ($('video-duration').value) body.duration_sec = Number($('video-duration').value);
      if ($('video-aspect').value) body.aspect_ratio = $('video-aspect').value;
      task = await apiJSON('/v1/vendorai/videos', { method: 'POST', json: body });
    } else {
      const seconds = $('video-seconds').value;
      const size = $('video-size').value;
      const file = $('video-reference').files[0];
      if ($('video-encoding').value === 'multipart') {
        const form = new FormData();
        form.append('model', model);
        form.append('prompt', prompt);
        if (seconds) form.append('seconds', seconds);
        if (size) form.append('size', size);
        if (file) form.append('input_reference', file, file.name);
        task = await apiJSON('/v1/videos', { method: 'POST', body: form });
      } else {
        const body = { model, prompt };
        if (seconds) body.seconds = seconds;
        if (size) body.size = size;
        if (file) body.input_reference = { image_url: await dataURI(file) };
        task = await apiJSON('/v1/videos', { method: 'POST', json: body });
      }
    }
    watch(task.id);
    refresh(false);
  } catch (err) {
    showError($('video-error'), err);
  } finally {
    $('video-create').disabled = false;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// watch polls task id until it ends, moving the progress bar, then shows
// the video.
async function watch(id) {
  const token = ++pollToken;
  $('video-task').hidden = false;
  $('video-result').hidden = true;
  $('video-task-id').textContent = id;
  $('video-facts').textContent = '';
  $('video-progress').value = 0;
  $('video-status').textContent = 'queued';
  for (;;) {
    let t;
    try {
      t = await apiJSON('/v1/videos/' + encodeURIComponent(id));
    } catch (err) {
      if (token !== pollToken) return;
      showError($('video-error'), err);
      if (err.status !== 429) return;
      // Rate limited: keep polling, as slowly as the gateway asks.
      await sleep(Math.max(err.retryAfter * 1000, POLL_MS));
      if (token !== pollToken) return;
      continue;
    }
    if (token !== pollToken) return;
    showError($('video-error'), null);
    $('video-progress').value = t.progress || 0;
    $('video-status').textContent = `${t.status}, ${t.progress || 0}%`;
    if (t.status === 'completed') {
      $('video-progress').value = 100;
      await show(id, token, t);
      refresh(false);
      return;
    }
    if (t.status === 'failed') {
      const e = t.error || {};
      showError($('video-error'), new ApiError(0, e.message || 'The task failed.', '', e.code));
      refresh(false);
      return;
    }
    await sleep(POLL_MS);
    if (token !== pollToken) return;
  }
}

// blobOf fetches the video (or the variant) of task id, if it is of one
// of the MEDIA_TYPES.
async function blobOf(id, variant) {
  const res = await api(`/v1/videos/${encodeURIComponent(id)}/content${variant ? '?variant=' + variant : ''}`);
  const type = (res.headers.get('Content-Type') || '').split(';')[0].trim().toLowerCase();
  if (!MEDIA_TYPES.has(type)) {
    throw new ApiError(0, `The ${variant || 'video'} of ${id} is ${type || 'of no type'}, not a video or an image: the console does not open it.`);
  }
  return res.blob();
}

// forget revokes the object URLs of the video shown, and empties the player.
function forget() {
  objectURLs.forEach((u) => URL.revokeObjectURL(u));
  objectURLs = [];
  $('video-player').removeAttribute('src');
  $('video-player').load();
  $('video-thumb').removeAttribute('src');
}

// show fetches the video and its thumbnail (with the key, hence as blobs)
// and shows them from object URLs.
async function show(id, token = ++pollToken, task = null) {
  $('video-task').hidden = false;
  $('video-task-id').textContent = id;
  $('video-status').textContent = 'completed, loading the video…';
  try {
    const [video, thumb] = await Promise.all([blobOf(id), blobOf(id, 'thumbnail').catch((err) => err)]);
    if (token !== pollToken) return;
    forget();
    const v = URL.createObjectURL(video);
    objectURLs.push(v);
    $('video-player').src = v;
    if (thumb instanceof Blob) {
      const t = URL.createObjectURL(thumb);
      objectURLs.push(t);
      $('video-thumb').src = t;
      $('video-thumb').hidden = false;
    } else {
      $('video-thumb').hidden = true;
      $('video-thumb').removeAttribute('src');
    }
    $('video-progress').value = 100;
    $('video-result').hidden = false;
    $('video-status').textContent = 'completed';
    const md = (task && task.metadata) || {};
    const facts = [md.duration && `${md.duration} s`, md.width && md.height && `${md.width}x${md.height}`, md.fps && `${md.fps} fps`].filter(Boolean);
    $('video-facts').textContent = facts.length ? facts.join(' · ') : '';
  } catch (err) {
    showError($('video-error'), err);
  }
}

async function download(id) {
  try {
    const u = URL.createObjectURL(await blobOf(id));
    const a = el('a', { href: u, download: id + '.mp4', hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(u), 10000);
  } catch (err) {
    showError($('video-error'), err);
  }
}

async function remove(id) {
  try {
    await api('/v1/videos/' + encodeURIComponent(id), { method: 'DELETE' });
    if ($('video-task-id').textContent === id) {
      pollToken++;
      $('video-task').hidden = true;
    }
    refresh(false);
  } catch (err) {
    showError($('video-error'), err);
  }
}

function row(t) {
  const done = t.status === 'completed';
  return el('tr', { 'data-task': t.id },
    el('td', {}, el('code', {}, t.id)),
    el('td', {}, t.model),
    el('td', {}, t.status + (done || t.status === 'failed' ? '' : ` ${t.progress || 0}%`),
      t.error && t.error.message ? el('div', { class: 'hint' }, t.error.message) : null),
    el('td', {}, t.seconds || ''),
    el('td', {}, t.size || ''),
    el('td', {}, fmtTime(t.created_at)),
    el('td', {}, el('div', { class: 'row' },
      done ? el('button', { type: 'button', class: 'secondary', onclick: () => show(t.id, undefined, t), 'aria-label': 'Show ' + t.id }, 'Show') : null,
      done ? el('button', { type: 'button', class: 'secondary', onclick: () => download(t.id), 'aria-label': 'Download ' + t.id }, 'Download') : null,
      confirmButton('Delete', 'Confirm delete', () => remove(t.id)))));
}

// refresh lists the tasks: the first page, or (more) the next one.
async function refresh(more) {
  try {
    const q = new URLSearchParams({ limit: '10' });
    if (more && after) q.set('after', after);
    const list = await apiJSON('/v1/videos?' + q);
    after = showPage(list, more, $('video-table'), $('video-more'), row);
  } catch (err) {
    showError($('video-error'), err);
  }
}

export function init() {
  $('video-form').addEventListener('submit', create);
  $('video-model').addEventListener('change', shape);
  $('video-mode').addEventListener('change', shapeAssets);
  $('video-prompt').addEventListener('input', count);
  for (const r of document.querySelectorAll('input[name=video-path]')) r.addEventListener('change', shape);
  $('video-refresh').addEventListener('click', () => refresh(false));
  $('video-more').addEventListener('click', () => refresh(true));
  $('video-thumb').hidden = true;
}

