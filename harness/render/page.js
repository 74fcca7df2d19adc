const specs = JSON.parse(document.getElementById('specs').textContent);
const keys = ['study', 'stack', 'workload', 'machine', 'cmp', 'row'];
const filters = ['study', 'stack', 'workload', 'machine'];
function state() { return Object.fromEntries(new URLSearchParams(location.hash.slice(1))); }
function shown(el, s) {
  const d = el.dataset;
  if (s.study && d.study !== s.study) return false;
  if (s.stack && !(d.stacks || '').split(' ').includes(s.stack)) return false;
  if (s.workload && !(d.scenarios || '').split(' ').includes(s.workload)) return false;
  if (s.machine && d.machines !== undefined && !d.machines.split('|').includes(s.machine)) return false;
  if (s.cmp && !(d.ids || '').split(' ').includes(s.cmp)) return false;
  if (s.row) {
    const row = document.querySelector(`tr[data-row="${s.row}"]`);
    const ids = row ? row.dataset.ids.split(' ') : [];
    if (d.row !== undefined ? d.row !== s.row : !ids.includes(d.ids)) return false;
  }
  return true;
}
function apply() {
  const s = state();
  for (const key of filters) document.getElementById('f-' + key).value = s[key] || '';
  for (const el of document.querySelectorAll('[data-study]')) el.hidden = !shown(el, s);
  document.getElementById('clear').hidden = !keys.some((k) => s[k]);
}
function choose() {
  const s = new URLSearchParams(location.hash.slice(1));  // the chooser's state stays
  for (const key of filters) {
    const value = document.getElementById('f-' + key).value;
    if (value) s.set(key, value); else s.delete(key);
  }
  location.hash = s.toString();
}
for (const key of filters) {
  document.getElementById('f-' + key).addEventListener('change', choose);
}
const choices = JSON.parse((document.getElementById('choices') || {textContent: '{}'}).textContent);
const clientSpecs = JSON.parse((document.getElementById('client-specs') || {textContent: '{}'}).textContent);
function rank() {
  const work = document.getElementById('c-work'), clients = document.getElementById('c-clients');
  const show = document.getElementById('c-show'), tls = document.getElementById('c-tls');
  if (!work) return;
  const s = state();
  if (s.work) work.value = s.work;
  tls.checked = s.tls === '1';
  const key = work.value + (tls.checked ? '+tls' : '');
  // the clients this work was measured at, and no others
  const levels = Object.keys(choices[key] || choices[work.value] || {}).sort((a, b) => a - b);
  const wanted = s.clients && levels.includes(s.clients) ? s.clients
    : levels.includes(clients.value) ? clients.value : levels[levels.length - 1];
  clients.replaceChildren(...levels.map((level) => new Option(level, level, false, level === wanted)));
  if (wanted !== undefined) clients.value = wanted;
  const found = (choices[key] || {})[clients.value] || [];
  const body = document.querySelector('#ranked tbody');
  body.replaceChildren(...found.map((each, i) => {
    const tr = document.createElement('tr');
    const latency = (value) => value == null ? '' : value.toFixed(2);
    const pooled = each.runs > 1 ? ` (over ${each.runs} runs)` : '';
    const row = [i + 1, each.stack, each.text + pooled, each.verdict, each.rate_text, latency(each.p50),
      latency(each.p99), each.blocks, each.run];
    for (const text of row) {
      const td = document.createElement('td'); td.textContent = text ?? ''; tr.append(td);
    }
    return tr;
  }));
  if (!found.length) body.innerHTML = '<tr><td colspan="9">not measured side by side here</td></tr>';
  if (s.show) show.value = s.show;
  const spec = (clientSpecs[key] || {})[show.value];
  window.clientsDrawn = spec
    ? vegaEmbed('#by-clients', spec, {actions: false, renderer: 'svg'}).then(() => key)
    : Promise.resolve(document.getElementById('by-clients').replaceChildren() || '');
}
function pickWork() {
  const s = new URLSearchParams(location.hash.slice(1));  // the filters' state stays
  s.set('work', document.getElementById('c-work').value);
  s.set('clients', document.getElementById('c-clients').value);
  s.set('show', document.getElementById('c-show').value);
  if (document.getElementById('c-tls').checked) s.set('tls', '1'); else s.delete('tls');
  location.hash = s.toString();
}
for (const id of ['c-work', 'c-clients', 'c-show', 'c-tls']) {
  const el = document.getElementById(id);
  if (el) el.addEventListener('change', pickWork);
}
window.addEventListener('hashchange', () => { apply(); rank(); });
apply();
rank();
// a link to a work (#work=s3-mongo&clients=50) opens on the view that ranks it
if (state().work && document.getElementById('which')) document.getElementById('which').scrollIntoView();
// Each comparison's chart is drawn as it comes near the window: those near it at opening before window.drawn
// resolves, the rest as the reader scrolls to them (window.drawAll() draws every one left).
const undrawn = new Map(specs.map((spec, i) => [i, spec]));
function draw(i) {
  const spec = undrawn.get(i);
  if (spec === undefined) return Promise.resolve();
  undrawn.delete(i);
  return vegaEmbed('#chart-' + i, spec, {actions: false, renderer: 'svg'});
}
window.drawAll = () => Promise.all([...undrawn.keys()].map(draw)).then(() => true);
const NEAR = 1000;  // px beyond the window's edges
const near = (el) => { const r = el.getBoundingClientRect(); return r.bottom > -NEAR && r.top < innerHeight + NEAR; };
const charts = specs.map((_, i) => document.getElementById('chart-' + i));
window.drawn = Promise.all(charts.map((el, i) => (near(el) ? draw(i) : null))).then(() => true);
const watch = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (entry.isIntersecting) { watch.unobserve(entry.target); draw(Number(entry.target.id.slice(6))); }
  }
}, {rootMargin: NEAR + 'px'});
charts.forEach((el, i) => { if (undrawn.has(i)) watch.observe(el); });
