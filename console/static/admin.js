// Admin: keys (create, with the secret shown once; disable, enable,
// revoke) and usage and cost per day and per model, drawn as charts. It
// calls the admin API at the configured URL with the admin key.
import { keys, admin, adminURL, el, showError, showPage, confirmButton, fmtTime } from './api.js';
import { barChart } from './chart.js';

const $ = (id) => document.getElementById(id);
let after = '';

const usd = (v) => v === 0 ? '$0' : '$' + (v >= 100 ? v.toFixed(0) : v >= 0.01 ? v.toFixed(2) : v.toPrecision(2));
const num = (v) => v >= 1e6 ? (v / 1e6).toFixed(1) + 'M' : v >= 1e4 ? (v / 1e3).toFixed(0) + 'k' : String(Math.round(v * 100) / 100);

function when(v) {
  if (v === null || v === undefined || v === '' || v === 0) return 'never';
  return typeof v === 'number' ? fmtTime(v) : new Date(v).toLocaleString();
}

function limitText(l) {
  if (l === null || l === undefined || l === '') return 'none';
  return typeof l === 'object' ? JSON.stringify(l) : String(l);
}

function keyRow(k) {
  return el('tr', { 'data-key': k.id },
    el('td', {}, el('code', {}, k.id)),
    el('td', {}, k.owner || ''),
    el('td', {}, k.quota === null || k.quota === undefined ? 'unlimited' : num(k.quota)),
    el('td', {}, num(k.used || 0)),
    el('td', {}, k.remaining === null || k.remaining === undefined ? 'unlimited' : num(k.remaining)),
    el('td', {}, limitText(k.rate_limit)),
    el('td', {}, k.allowed_models && k.allowed_models.length ? k.allowed_models.join(', ') : 'all'),
    el('td', {}, when(k.expires_at)),
    el('td', {}, `${k.budget_usd === null || k.budget_usd === undefined ? 'no budget' : usd(k.budget_usd)} / ${usd(k.cost_usd || 0)}`),
    el('td', {}, k.disabled ? 'disabled' : 'active'),
    el('td', {}, el('div', { class: 'row' },
      el('button', { type: 'button', class: 'secondary', 'aria-label': (k.disabled ? 'Enable ' : 'Disable ') + k.id,
        onclick: () => patch(k.id, { disabled: !k.disabled }) }, k.disabled ? 'Enable' : 'Disable'),
      confirmButton('Revoke', 'Confirm revoke', () => revoke(k.id)))));
}

async function listKeys(more) {
  if (!keys.admin) return;
  showError($('admin-error'), null);
  try {
    const q = new URLSearchParams({ limit: '20' });
    if (more && after) q.set('after', after);
    const list = await admin('/admin/v1/keys?' + q);
    after = showPage(list, more, $('keys-table'), $('keys-more'), keyRow);
  } catch (err) {
    showError($('admin-error'), err);
  }
}

async function patch(id, body) {
  try {
    await admin('/admin/v1/keys/' + encodeURIComponent(id), { method: 'PATCH', json: body });
    listKeys(false);
  } catch (err) {
    showError($('admin-error'), err);
  }
}

async function revoke(id) {
  try {
    await admin('/admin/v1/keys/' + encodeURIComponent(id), { method: 'DELETE' });
    listKeys(false);
  } catch (err) {
    showError($('admin-error'), err);
  }
}

async function create(ev) {
  ev.preventDefault();
  showError($('admin-error'), null);
  const v = (id) => $(id).value.trim();
  const body = { owner: v('ak-owner') };
  if (v('ak-quota')) body.quota = Number(v('ak-quota'));
  if (v('ak-rate')) body.rate_limit = v('ak-rate');
  if (v('ak-models')) body.allowed_models = v('ak-models').split(',').map((s) => s.trim()).filter(Boolean);
  if (v('ak-expires')) body.expires_at = new Date(v('ak-expires')).toISOString().replace(/\.\d+Z$/, 'Z');
  if (v('ak-budget')) body.budget_usd = Number(v('ak-budget'));
  try {
    const k = await admin('/admin/v1/keys', { method: 'POST', json: body });
    $('ak-secret-id').textContent = k.id;
    $('ak-secret').value = k.secret || '';
    $('ak-secret').textContent = k.secret || '';
    $('ak-secret-box').hidden = false;
    $('admin-create').reset();
    listKeys(false);
  } catch (err) {
    showError($('admin-error'), err);
  }
}

const isoDay = (d) => d.toISOString().slice(0, 10);

// days lists the days from from to to (YYYY-MM-DD), at most 366.
function days(from, to) {
  const out = [];
  const d = new Date(from + 'T00:00:00Z');
  const end = new Date(to + 'T00:00:00Z');
  while (d <= end && out.length < 366) {
    out.push(isoDay(d));
    d.setUTCDate(d.getUTCDate() + 1);
  }
  return out;
}

async function usage(ev) {
  if (ev) ev.preventDefault();
  if (!keys.admin) return;
  showError($('admin-error'), null);
  const from = $('usage-from').value;
  const to = $('usage-to').value;
  try {
    const q = (g) => '/admin/v1/usage?' + new URLSearchParams({ from, to, group_by: g });
    const [byDay, byModel] = await Promise.all([admin(q('day')), admin(q('model'))]);
    const dayRows = new Map((byDay.data || []).map((r) => [r.day, r]));
    const labels = from && to && from <= to ? days(from, to) : [...dayRows.keys()].sort();
    for (const d of dayRows.keys()) if (!labels.includes(d)) labels.push(d);
    const col = (rows, f) => rows.map((r) => (r ? r[f] || 0 : 0));
    const dr = labels.map((d) => dayRows.get(d));
    const mr = byModel.data || [];
    const mLabels = mr.map((r) => r.model);
    // The parts of the tokens priced apart, when the providers reported
    // any (issue 26): a chart of their own, absent otherwise.
    const parts = ['cached_tokens', 'cache_write_tokens', 'reasoning_tokens'];
    const details = mr.some((r) => parts.some((p) => r[p] > 0))
      ? [barChart({ id: 'chart-token-details-model', title: 'Cached, cache-write and reasoning tokens per model', labels: mLabels,
        series: [{ name: 'cached input tokens', values: col(mr, 'cached_tokens') }, { name: 'cache writes', values: col(mr, 'cache_write_tokens') },
          { name: 'reasoning tokens', values: col(mr, 'reasoning_tokens') }], format: num })]
      : [];
    $('usage-charts').replaceChildren(
      barChart({ id: 'chart-requests-day', title: 'Requests per day', labels, series: [{ name: 'requests', values: col(dr, 'requests') }], format: num }),
      barChart({ id: 'chart-tokens-day', title: 'Tokens per day', labels,
        series: [{ name: 'input tokens', values: col(dr, 'input_tokens') }, { name: 'output tokens', values: col(dr, 'output_tokens') }], format: num }),
      barChart({ id: 'chart-cost-day', title: 'Cost per day (USD)', labels, series: [{ name: 'cost', values: col(dr, 'cost_usd') }], format: usd, prefix: '$' }),
      barChart({ id: 'chart-cost-model', title: 'Cost per model (USD)', labels: mLabels, series: [{ name: 'cost', values: col(mr, 'cost_usd') }], format: usd, prefix: '$' }),
      barChart({ id: 'chart-tokens-model', title: 'Tokens per model', labels: mLabels,
        series: [{ name: 'input tokens', values: col(mr, 'input_tokens') }, { name: 'output tokens', values: col(mr, 'output_tokens') }], format: num }),
      ...details);
  } catch (err) {
    showError($('admin-error'), err);
  }
}

export function init(url) {
  $('admin-off').hidden = !!url;
  $('admin-on').hidden = !url;
  if (!url) return;
  $('admin-url').textContent = adminURL();
  const today = new Date();
  const start = new Date(today);
  start.setUTCDate(start.getUTCDate() - 13);
  $('usage-from').value = isoDay(start);
  $('usage-to').value = isoDay(today);
  $('admin-key-input').value = keys.admin;
  $('admin-key-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    keys.admin = $('admin-key-input').value.trim();
    listKeys(false);
    usage();
  });
  $('admin-forget').addEventListener('click', () => {
    keys.admin = '';
    $('admin-key-input').value = '';
    $('keys-table').tBodies[0].replaceChildren();
    $('usage-charts').replaceChildren();
  });
  $('admin-create').addEventListener('submit', create);
  $('admin-refresh').addEventListener('click', () => listKeys(false));
  $('keys-more').addEventListener('click', () => listKeys(true));
  $('usage-form').addEventListener('submit', usage);
  $('ak-copy').addEventListener('click', () => navigator.clipboard && navigator.clipboard.writeText($('ak-secret').value));
  if (keys.admin) {
    listKeys(false);
    usage();
  }
}
