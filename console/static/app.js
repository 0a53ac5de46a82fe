// The console's entry point: tabs, the key view and the model list; the
// other views are modules of their own, told of the models on each load.
import { keys, apiJSON, el, showError, setAdminURL } from './api.js';
import * as chat from './chat.js';
import * as conv from './conv.js';
import * as video from './video.js';
import * as adminView from './admin.js';

const $ = (id) => document.getElementById(id);
const views = [chat, conv, video];

// Tabs: buttons with role=tab; arrow keys, Home and End move between them.
function setupTabs() {
  const tabs = [...document.querySelectorAll('[role=tab]')];
  const select = (tab, focus) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute('aria-controls')).hidden = !on;
    }
    if (focus) tab.focus();
  };
  tabs.forEach((t, i) => {
    t.addEventListener('click', () => select(t, false));
    t.addEventListener('keydown', (ev) => {
      const n = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[ev.key];
      if (n === undefined) return;
      ev.preventDefault();
      select(tabs[(n + tabs.length) % tabs.length], true);
    });
  });
}

let models = [];
let loads = 0; // the latest loadModels; an older one's answer is dropped

function capabilities(m) {
  const out = [];
  if (m.reasoning) out.push('reasoning');
  const types = m.supported_endpoint_types || [];
  if (types.includes('compat-video')) {
    const v = m.video || {};
    out.push(v.modes && v.modes.length ? 'modes ' + v.modes.join(', ') : 'every mode');
    if (v.seconds) out.push('seconds ' + v.seconds.join(', '));
    if (v.sizes) out.push('sizes ' + v.sizes.join(', ') + (v.size_required ? ' (required)' : ''));
    if (v.resolutions) out.push('resolutions ' + v.resolutions.join(', '));
    const d = [v.default_seconds && v.default_seconds + ' s', v.default_size].filter(Boolean);
    if (d.length) out.push('default ' + d.join(', '));
  }
  return out.join('; ');
}

async function loadModels() {
  const load = ++loads;
  const table = $('models-table');
  const body = table.tBodies[0];
  showError($('key-error'), null);
  if (!keys.api) {
    models = [];
    body.replaceChildren();
    table.hidden = true;
    $('models-empty').hidden = false;
    views.forEach((v) => v.setModels(models));
    return;
  }
  try {
    const list = await apiJSON('/v1/models');
    if (load !== loads) return;
    models = list.data || [];
    body.replaceChildren(...models.map((m) => el('tr', { 'data-model': m.id },
      el('td', {}, el('code', {}, m.id)),
      el('td', {}, (m.supported_endpoint_types || []).join(', ')),
      el('td', {}, capabilities(m)))));
    table.hidden = false;
    $('models-empty').hidden = true;
    $('key-badge').textContent = `Key set · ${models.length} model${models.length === 1 ? '' : 's'}`;
    $('key-badge').classList.add('ok');
  } catch (err) {
    if (load !== loads) return;
    models = [];
    body.replaceChildren();
    table.hidden = true;
    $('models-empty').hidden = false;
    $('key-badge').textContent = 'Key refused';
    $('key-badge').classList.remove('ok');
    showError($('key-error'), err);
  }
  views.forEach((v) => v.setModels(models));
}

// useKey makes key the tab's key, and lists its models.
function useKey(key) {
  keys.api = key;
  $('key-input').value = key;
  loadModels();
}

// takeFragmentKey takes a #key=… out of the fragment, and out of the
// address bar, and returns it ('' if none).
function takeFragmentKey() {
  const frag = new URLSearchParams(location.hash.slice(1));
  if (!frag.has('key')) return '';
  const key = frag.get('key');
  frag.delete('key');
  const rest = frag.toString();
  history.replaceState(null, '', location.pathname + location.search + (rest ? '#' + rest : ''));
  return key;
}

// keyFromFragment reads the #key=… of the address the page loaded with:
// with no key set, it becomes the tab's key; one that would replace the
// key set is offered, and used only when the person says so, so that a
// page that opened the console cannot swap its own key in.
function keyFromFragment() {
  const key = takeFragmentKey();
  if (!key || key === keys.api) return;
  if (!keys.api) {
    keys.api = key;
    return;
  }
  $('key-offer-end').textContent = key.slice(-4);
  $('key-offer').hidden = false;
  const decide = (use) => () => {
    $('key-offer').hidden = true;
    $('key-offer-use').onclick = $('key-offer-keep').onclick = null;
    if (use) useKey(key);
  };
  $('key-offer-use').onclick = decide(true);
  $('key-offer-keep').onclick = decide(false);
}

function setupKey() {
  keyFromFragment();
  // A key that appears in the fragment later (another page can change
  // it) is not read: it only leaves the address bar.
  window.addEventListener('hashchange', () => {
    if (takeFragmentKey()) $('key-note').hidden = false;
  });
  $('key-input').value = keys.api;
  $('key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    $('key-note').hidden = true;
    $('key-offer').hidden = true; // the person chose a key
    useKey($('key-input').value.trim());
  });
  $('key-forget').addEventListener('click', () => {
    keys.api = '';
    $('key-input').value = '';
    $('key-badge').textContent = 'No API key';
    $('key-badge').classList.remove('ok');
    loadModels();
  });
}

async function main() {
  setupTabs();
  setupKey();
  let config = {};
  try {
    const res = await fetch(new URL('config.json', import.meta.url));
    if (res.ok) config = await res.json();
  } catch { /* no admin views */ }
  setAdminURL(config.admin_url || '');
  chat.init();
  conv.init();
  video.init();
  adminView.init(config.admin_url || '');
  await loadModels();
  document.body.dataset.ready = 'true';
}

main();
