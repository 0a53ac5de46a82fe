// barChart draws a bar chart as inline SVG (no library): one bar per
// label, its series stacked when there are more than one. It returns a <figure> with the
// chart (role=img, labelled by its title) and the same numbers as a table,
// for screen readers and for copying.
import { el } from './api.js';

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

// tick formats an axis value v of a scale whose step is step, with as
// many decimals as the step needs.
function tick(v, step) {
  const d = Math.min(12, Math.max(0, Math.ceil(-Math.log10(step)) + 2));
  let t = v.toFixed(d);
  if (t.includes('.')) t = t.replace(/0+$/, '').replace(/\.$/, '');
  return t;
}

// barChart({id, title, labels, series: [{name, values}], format, prefix})
// draws the bars; format words a value in the tooltips and the table, and
// prefix (such as "$") starts the axis's numbers.
export function barChart({ id, title, labels, series, format = (v) => String(v), prefix = '' }) {
  const totals = labels.map((_, i) => series.reduce((s, x) => s + (x.values[i] || 0), 0));
  const max = niceMax(Math.max(0, ...totals));
  const ticks = [0, 1, 2, 3, 4].map((k) => prefix + tick((max * k) / 4, max / 4));
  const W = 440, H = 230, right = 8, top = 10, bottom = 30;
  const left = 10 + 7.5 * Math.max(...ticks.map((t) => t.length));
  const plotW = W - left - right, plotH = H - top - bottom;
  const slot = plotW / Math.max(labels.length, 1);
  const barW = Math.max(2, Math.min(40, slot * 0.7));
  const titleId = id + '-title';
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-labelledby': titleId, 'data-chart': id });
  root.append(svg('title', { id: titleId }, title));
  ticks.forEach((t, k) => {
    const y = top + plotH - (plotH * k) / 4;
    root.append(svg('line', { x1: left, x2: W - right, y1: y, y2: y, class: 'axis' }));
    root.append(svg('text', { x: left - 4, y: y + 4, 'text-anchor': 'end' }, t));
  });
  const every = Math.ceil(labels.length / 7);
  // Days of one year are labelled MM-DD.
  const sameYear = labels.length > 0 && labels.every((l) => /^\d{4}-\d\d-\d\d$/.test(l) && l.slice(0, 4) === labels[0].slice(0, 4));
  const short = (l) => (sameYear ? l.slice(5) : l.length > 12 ? l.slice(0, 11) + '…' : l);
  labels.forEach((label, i) => {
    const x = left + slot * i + (slot - barW) / 2;
    let y0 = top + plotH;
    series.forEach((s, j) => {
      const v = s.values[i] || 0;
      const h = (plotH * v) / max;
      y0 -= h;
      const r = svg('rect', { x, y: y0, width: barW, height: Math.max(h, 0), class: 'bar' + j });
      r.append(svg('title', {}, `${label}: ${s.name} ${format(v)}`));
      root.append(r);
    });
    if (i % every === 0) {
      root.append(svg('text', { x: x + barW / 2, y: H - bottom + 16, 'text-anchor': 'middle' }, short(label)));
    }
  });
  const legend = series.length > 1
    ? el('div', { class: 'legend' }, series.map((s, j) => el('span', { class: 'l' + j }, s.name)))
    : null;
  const table = el('table', {},
    el('thead', {}, el('tr', {}, el('th', { scope: 'col' }, ''), series.map((s) => el('th', { scope: 'col' }, s.name)))),
    el('tbody', {}, labels.map((l, i) => el('tr', {}, el('th', { scope: 'row' }, l), series.map((s) => el('td', {}, format(s.values[i] || 0)))))));
  return el('figure', { class: 'chart', id },
    el('figcaption', {}, el('strong', {}, title)), legend, root,
    el('details', {}, el('summary', {}, 'Numbers'), el('div', { class: 'scroll' }, table)));
}
