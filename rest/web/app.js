// weir's web dashboard (docs/operations.md § Web dashboard): plain
// JavaScript over the jobmanager's REST API, no framework and nothing loaded
// from elsewhere. Hash routes: #/ (overview), #/jobs, #/taskmanagers,
// #/jobs/JID[/TAB[/VERTEX]]. The visible page asks again every POLL_MS.
// An endpoint this jobmanager lacks (404) shows "not available": a view
// never throws on missing data.
'use strict';

const POLL_MS = 1500;
const SVG_NS = 'http://www.w3.org/2000/svg';
const ENDED = new Set(['FINISHED', 'CANCELED', 'FAILED', 'SUSPENDED']);

// ---------------------------------------------------------------- helpers

function add(node, kids) {
  for (const k of kids) {
    if (k === null || k === undefined || k === false) continue;
    if (Array.isArray(k)) add(node, k);
    else node.append(k instanceof Node ? k : String(k));
  }
  return node;
}

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function')
      node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  return node;
}

/// An HTML element: el('td', {class: 'num'}, text, child...).
function el(tag, attrs, ...kids) {
  return add(setAttrs(document.createElement(tag), attrs), kids);
}

/// The same in SVG's namespace.
function sv(tag, attrs, ...kids) {
  return add(setAttrs(document.createElementNS(SVG_NS, tag), attrs), kids);
}

/// {ok, status, body}: status 0 when the jobmanager did not answer.
async function api(path, init) {
  try {
    const res = await fetch(path, Object.assign({cache: 'no-store'}, init));
    let body = null;
    try { body = await res.json(); } catch (e) { body = null; }
    return {ok: res.ok, status: res.status, body};
  } catch (e) {
    return {ok: false, status: 0, body: null};
  }
}

/// What went wrong with answer `r`, in one line.
function problem(r) {
  if (r.status === 0) return 'the jobmanager does not answer';
  const errs = r.body && r.body.errors;
  if (Array.isArray(errs) && errs.length) return String(errs[0]);
  return 'HTTP ' + r.status;
}

/// A panel's text for an answer that has no data.
function unavailable(r) {
  return el('p', {class: 'empty', 'data-unavailable': true},
    r.status === 404 ? 'Not available from this jobmanager.' : problem(r));
}

const num = (x) => typeof x === 'number' && isFinite(x);

function fmtCount(n) {
  if (!num(n) || n < 0) return '–';
  if (n < 1000) return String(Math.round(n));
  const units = ['k', 'M', 'G', 'T'];
  let i = -1;
  while (n >= 999.5 && i < units.length - 1) { n /= 1000; i++; }
  return (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)) + units[i];
}

function fmtBytes(n) {
  if (!num(n) || n < 0) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + ' ' + units[i];
}

function fmtDuration(ms) {
  if (!num(ms) || ms < 0) return '–';
  if (ms < 1000) return Math.round(ms) + ' ms';
  const s = Math.floor(ms / 1000);
  if (s < 60) return s + 's';
  const m = Math.floor(s / 60);
  if (m < 60) return m + 'm ' + (s % 60) + 's';
  const h = Math.floor(m / 60);
  if (h < 24) return h + 'h ' + (m % 60) + 'm';
  return Math.floor(h / 24) + 'd ' + (h % 24) + 'h';
}

function fmtTime(ts) {
  if (!num(ts) || ts <= 0) return '–';
  const d = new Date(ts);
  const p = (x) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
         `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/// Flink's watermarks are int64 strings; the lowest one means none yet.
const NO_WATERMARK = -(2n ** 63n);

/// A watermark (a BigInt, or undefined) as a user reads it: UTC time.
function fmtWatermark(w) {
  if (typeof w !== 'bigint') return '–';
  if (w === NO_WATERMARK) return 'No watermark';
  const d = new Date(Number(w));
  return isNaN(d.getTime()) ? String(w) : d.toISOString();
}

function stateBadge(s, id) {
  const text = typeof s === 'string' && s ? s : 'UNKNOWN';
  return el('span', {class: 'state state-' + text, 'data-state': text, id}, text);
}

function bpBadge(level) {
  const known = level === 'ok' || level === 'low' || level === 'high';
  return el('span', {class: 'bp bp-' + (known ? level : 'none')},
            known ? level : 'n/a');
}

function card(title, aside, ...kids) {
  return el('section', {class: 'card'},
    el('h2', {}, title, aside ? el('span', {class: 'aside'}, aside) : null),
    ...kids);
}

/// A table: `cols` are [label, numeric?]; `rows` are arrays of cells or
/// {cells, attrs}.
function table(cols, rows, cls) {
  return el('table', {class: cls},
    el('thead', {}, el('tr', {}, cols.map(([c, n]) =>
      el('th', {class: n ? 'num' : null}, c)))),
    el('tbody', {}, rows.map((r) => {
      const cells = Array.isArray(r) ? r : r.cells;
      return el('tr', Array.isArray(r) ? {} : r.attrs, cells.map((c, i) =>
        el('td', {class: cols[i] && cols[i][1] ? 'num' : null}, c)));
    })));
}

/// Replaces `box`'s content by `build()` only when `key` changed, so that
/// polling keeps open details, selections and scroll positions.
function refill(box, key, build) {
  if (box.dataset.key === key) return;
  box.dataset.key = key;
  box.replaceChildren();
  add(box, [build()]);
}

let toastTimer = null;
function toast(text, bad) {
  const t = document.getElementById('toast');
  t.textContent = text;
  t.className = 'toast' + (bad ? ' bad' : '');
  t.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { t.hidden = true; }, 6000);
}

/// A dialog with `body` and a button `okLabel` that runs `onOk`.
function dialog(title, body, okLabel, okClass, onOk) {
  const back = el('div', {class: 'modal-back'});
  const close = () => back.remove();
  const ok = el('button', {class: okClass, id: 'dialog-ok'}, okLabel);
  ok.addEventListener('click', async () => {
    ok.disabled = true;
    try { await onOk(); } finally { close(); }
  });
  back.append(el('div', {class: 'modal', role: 'dialog'},
    el('h2', {}, title), body,
    el('div', {class: 'row'}, el('button', {onclick: close}, 'Close'), ok)));
  back.addEventListener('click', (e) => { if (e.target === back) close(); });
  document.body.append(back);
  ok.focus();
}

// --------------------------------------------------------------- overview

function jobRows(jobs) {
  return jobs.map((j) => {
    const t = j.tasks;
    const tasks = t && num(t.total)
      ? `${t.running || 0} running / ${t.total}` : '–';
    return {
      attrs: {class: 'clickable', 'data-job': j.jid,
              onclick: () => { location.hash = '#/jobs/' + j.jid; }},
      cells: [el('a', {href: '#/jobs/' + j.jid}, j.name || j.jid),
              el('span', {class: 'mono muted'}, j.jid), stateBadge(j.state),
              fmtTime(j['start-time']), fmtDuration(j.duration), tasks]};
  });
}

const JOB_COLS = [['Name'], ['Job ID'], ['State'], ['Started'], ['Duration', 1],
                  ['Tasks', 1]];

function jobTables(box, r) {
  if (!r.ok || !r.body || !Array.isArray(r.body.jobs)) {
    refill(box, 'bad' + r.status, () => card('Jobs', null, unavailable(r)));
    return;
  }
  const jobs = r.body.jobs.slice().sort(
    (a, b) => (b['start-time'] || 0) - (a['start-time'] || 0));
  const running = jobs.filter((j) => !ENDED.has(j.state));
  const ended = jobs.filter((j) => ENDED.has(j.state));
  refill(box, JSON.stringify(jobs), () => [
    card('Running jobs', `${running.length}`, running.length
      ? table(JOB_COLS, jobRows(running), 'jobs')
      : el('p', {class: 'empty'}, 'No job is running.')),
    card('Completed jobs', `${ended.length}`, ended.length
      ? table(JOB_COLS, jobRows(ended), 'jobs')
      : el('p', {class: 'empty'}, 'No job has ended yet.'))]);
}

function overviewPage(view) {
  const stats = el('div', {class: 'stats', id: 'cluster-stats'});
  const jobs = el('div', {id: 'job-lists'});
  const tms = el('div', {id: 'taskmanagers'});
  view.append(stats, jobs, tms);
  const stat = (key, label, value, cls) =>
    el('div', {class: cls ? 'stat ' + cls : 'stat', 'data-stat': key},
       el('div', {class: 'num', id: 'stat-' + key}, value),
       el('div', {class: 'label'}, label));
  return {
    async refresh() {
      const [ov, list] = await Promise.all([api('/overview'),
                                            api('/jobs/overview')]);
      const o = ov.body || {};
      refill(stats, JSON.stringify([ov.status, o]), () => ov.ok ? [
        stat('taskmanagers', 'Task managers', o.taskmanagers),
        stat('slots', 'Slots free / total',
             `${o['slots-available']} / ${o['slots-total']}`),
        stat('jobs-running', 'Running jobs', o['jobs-running'], 'running'),
        stat('jobs-finished', 'Finished', o['jobs-finished']),
        stat('jobs-cancelled', 'Canceled', o['jobs-cancelled']),
        stat('jobs-failed', 'Failed', o['jobs-failed'],
             o['jobs-failed'] ? 'failed' : ''),
        stat('version', 'weir version', o['weir-version'] || '–')]
        : card('Cluster', null, unavailable(ov)));
      jobTables(jobs, list);
      await taskmanagers(tms);
      return ov.status !== 0;
    }};
}

function jobsPage(view) {
  const box = el('div', {id: 'job-lists'});
  view.append(box);
  return {
    async refresh() {
      const r = await api('/jobs/overview');
      jobTables(box, r);
      return r.status !== 0;
    }};
}

/// Asks for the task managers and shows them in `box`.
async function taskmanagers(box) {
  const r = await api('/taskmanagers');
  const tms = r.ok && r.body && Array.isArray(r.body.taskmanagers)
    ? r.body.taskmanagers : null;
  refill(box, JSON.stringify([r.status, tms]), () => card(
    'Task managers', tms ? `${tms.length}` : null,
    !tms ? unavailable(r)
      : !tms.length ? el('p', {class: 'empty'}, 'No task manager is registered.')
      : table([['ID'], ['Slots', 1], ['Free slots', 1], ['CPU cores', 1],
               ['Memory', 1], ['Last heartbeat', 1]],
          tms.map((t) => ({attrs: {'data-taskmanager': t['weir-name'] || t.id}, cells: [
            el('span', {class: 'mono', title: t.id}, t['weir-name'] || t.id),
            fmtCount(t.slotsNumber),
            fmtCount(t.freeSlots),
            fmtCount(t.hardware && t.hardware.cpuCores),
            fmtBytes(t.hardware && t.hardware.physicalMemory),
            // Flink's field holds the heartbeat's time (epoch ms), not an
            // age, whatever its name says.
            el('span', {'data-heartbeat': t['weir-name'] || t.id},
               num(t.timeSinceLastHeartbeat) && t.timeSinceLastHeartbeat > 0
                 ? fmtDuration(Math.max(0, Date.now()
                                           - t.timeSinceLastHeartbeat))
                     + ' ago'
                 : '–')]})))));
  return r.status !== 0;
}

function taskmanagersPage(view) {
  const box = el('div', {id: 'taskmanagers'});
  view.append(box);
  return {refresh: () => taskmanagers(box)};
}

// ------------------------------------------------------------- job graph

/// The job with its vertices keyed by name, as people know them: Flink's
/// 32-hex vertex ids (what the REST API's paths take) move to `rest`, and
/// the plan's node and input ids follow.
function byName(job) {
  if (!job || !Array.isArray(job.vertices)) return job;
  const names = new Map(job.vertices.map((v) => [v.id, v.name || v.id]));
  const name = (id) => names.get(id) || id;
  const vertices = job.vertices.map((v) => ({...v, rest: v.id, id: name(v.id)}));
  let plan = job.plan;
  if (plan && Array.isArray(plan.nodes))
    plan = {...plan, nodes: plan.nodes.map((n) => ({...n, id: name(n.id),
      inputs: Array.isArray(n.inputs)
        ? n.inputs.map((i) => ({...i, id: name(i.id)})) : n.inputs}))};
  return {...job, vertices, plan};
}

/// The id the REST API takes for vertex `name` of `job`.
function restId(job, name) {
  const v = (job && Array.isArray(job.vertices) ? job.vertices : [])
    .find((x) => x.id === name);
  return v && v.rest ? v.rest : name;
}

const NODE_W = 200, NODE_H = 112, GAP_X = 62, GAP_Y = 26, PAD = 12;

/// The vertices and edges to draw: edges from the plan's inputs (none
/// without a plan: the vertices then stand in a row).
function graphModel(job) {
  const vertices = Array.isArray(job.vertices) ? job.vertices : [];
  const ids = vertices.map((v) => v.id);
  const known = new Set(ids);
  const plan = new Map();
  const edges = [];
  const nodes = job.plan && Array.isArray(job.plan.nodes) ? job.plan.nodes : [];
  for (const n of nodes) {
    plan.set(n.id, n);
    for (const input of Array.isArray(n.inputs) ? n.inputs : [])
      if (known.has(input.id) && known.has(n.id))
        edges.push({from: input.id, to: n.id,
                    label: String(input.ship_strategy || '').toLowerCase()});
  }
  return {ids, edges, plan};
}

/// Columns by longest path from a source; each column ordered by its
/// vertices' predecessors (barycentre), so that edges cross less.
function layout(ids, edges) {
  const preds = new Map(ids.map((i) => [i, []]));
  const succs = new Map(ids.map((i) => [i, []]));
  for (const e of edges) { preds.get(e.to).push(e.from); succs.get(e.from).push(e.to); }
  const layer = new Map();
  const gap = edges.length ? GAP_X : GAP_X / 3; // no arrows to fit in between
  if (!edges.length) {
    ids.forEach((i, k) => layer.set(i, k));
  } else {
    const indeg = new Map(ids.map((i) => [i, preds.get(i).length]));
    const queue = ids.filter((i) => indeg.get(i) === 0);
    queue.forEach((i) => layer.set(i, 0));
    while (queue.length) {
      const i = queue.shift();
      for (const s of succs.get(i)) {
        layer.set(s, Math.max(layer.get(s) || 0, layer.get(i) + 1));
        indeg.set(s, indeg.get(s) - 1);
        if (indeg.get(s) === 0) queue.push(s);
      }
    }
    ids.forEach((i) => { if (!layer.has(i)) layer.set(i, 0); });
  }
  const columns = [];
  ids.forEach((i) => { const l = layer.get(i); (columns[l] = columns[l] || []).push(i); });
  const row = new Map();
  for (const col of columns.filter(Boolean)) {
    const key = (i, k) => {
      const p = preds.get(i).filter((x) => row.has(x));
      return p.length ? p.reduce((a, x) => a + row.get(x), 0) / p.length : k;
    };
    col.map((i, k) => [i, key(i, k)]).sort((a, b) => a[1] - b[1])
      .forEach(([i], r) => row.set(i, r));
    col.sort((a, b) => row.get(a) - row.get(b));
  }
  const tallest = Math.max(1, ...columns.map((c) => (c ? c.length : 0)));
  const height = tallest * NODE_H + (tallest - 1) * GAP_Y;
  const pos = new Map();
  columns.forEach((col, l) => {
    if (!col) return;
    const top = (height - (col.length * NODE_H + (col.length - 1) * GAP_Y)) / 2;
    col.forEach((i, r) => pos.set(i, {x: PAD + l * (NODE_W + gap),
                                      y: PAD + top + r * (NODE_H + GAP_Y)}));
  });
  const width = columns.length * NODE_W + (columns.length - 1) * gap;
  return {pos, width: width + 2 * PAD, height: height + 2 * PAD};
}

function clip(text, max) {
  const s = String(text);
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

/// The SVG of the graph, and per vertex the parts that polling updates.
function drawGraph(model, onPick) {
  const {pos, width, height} = layout(model.ids, model.edges);
  const svg = sv('svg', {class: 'graph', id: 'job-graph', width, height,
                         viewBox: `0 0 ${width} ${height}`, role: 'img'});
  svg.append(sv('defs', {}, sv('marker', {
    id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: 'auto-start-reverse'},
  sv('path', {d: 'M0,0 L10,5 L0,10 z', fill: '#9ca3af'}))));
  for (const e of model.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    const x1 = a.x + NODE_W, y1 = a.y + NODE_H / 2, x2 = b.x - 2, y2 = b.y + NODE_H / 2;
    const c = Math.max(30, (x2 - x1) / 2);
    const g = sv('g', {class: 'edge', 'data-from': e.from, 'data-to': e.to},
      sv('path', {d: `M${x1},${y1} C${x1 + c},${y1} ${x2 - c},${y2} ${x2},${y2}`,
                  'marker-end': 'url(#arrow)'}));
    if (e.label) {
      const mx = (x1 + x2) / 2, my = (y1 + y2) / 2, w = e.label.length * 5.8 + 8;
      g.append(sv('rect', {class: 'label-bg', x: mx - w / 2, y: my - 8, width: w,
                           height: 15, rx: 3}),
               sv('text', {x: mx, y: my + 4, 'text-anchor': 'middle'}, e.label));
    }
    svg.append(g);
  }
  const parts = new Map();
  for (const id of model.ids) {
    const p = pos.get(id);
    const node = model.plan.get(id) || {};
    const op = node.operator || node.description || '';
    const g = sv('g', {class: 'vertex', 'data-vertex': id,
                       transform: `translate(${p.x},${p.y})`,
                       onclick: () => onPick(id)},
      sv('title', {}, op ? `${id} (${op})` : id),
      sv('rect', {class: 'box', width: NODE_W, height: NODE_H, rx: 8}),
      sv('path', {class: 'stripe',
                  d: `M0,8 A8,8 0 0 1 8,0 H${NODE_W - 8} A8,8 0 0 1 ${NODE_W},8 Z`}),
      sv('text', {class: 'v-name', x: 14, y: op ? 32 : 40}, clip(id, 21)),
      op ? sv('text', {class: 'v-op', x: 14, y: 48}, clip(op, 28)) : null);
    const par = sv('text', {class: 'v-par', x: 14, y: 70});
    const rec = sv('text', {class: 'v-rec', x: 14, y: 87});
    const status = sv('text', {class: 'v-status', x: 14, y: 103});
    const bp = sv('text', {class: 'v-bp', x: NODE_W - 12, y: 103,
                           'text-anchor': 'end'});
    g.append(par, rec, status, bp);
    svg.append(g);
    parts.set(id, {g, par, rec, status, bp, planPar: node.parallelism});
  }
  return {svg, parts};
}

/// Writes the live figures into the drawn vertices.
function updateGraph(parts, job, bp, selected) {
  for (const v of Array.isArray(job.vertices) ? job.vertices : []) {
    const p = parts.get(v.id);
    if (!p) continue;
    const par = num(v.parallelism) ? v.parallelism : p.planPar;
    const m = v.metrics || {};
    const level = bp.get(v.id) || 'none';
    setAttrs(p.g, {'data-parallelism': num(par) ? par : '',
                   'data-status': v.status || '', 'data-backpressure': level});
    p.g.classList.toggle('selected', v.id === selected);
    p.par.textContent = 'parallelism ' + (num(par) ? par : '–');
    p.rec.textContent = `records in ${fmtCount(m['read-records'])}` +
                        ` · out ${fmtCount(m['write-records'])}`;
    p.status.textContent = v.status || '';
    p.bp.textContent = level === 'none' ? '' : 'backpressure ' + level;
  }
}

// ------------------------------------------------------------- job page

const TABS = [['vertices', 'Vertices'], ['subtasks', 'Subtasks'],
              ['watermarks', 'Watermarks'], ['checkpoints', 'Checkpoints'],
              ['exceptions', 'Exceptions']];

function jobPage(view, route) {
  const jid = route.jid;
  const st = {route, graphKey: null, parts: new Map(), job: null,
              last: null, rates: new Map()};
  const name = el('h1', {id: 'job-name'}, jid);
  const stateBox = el('span', {id: 'job-state-box'});
  const facts = el('div', {class: 'facts'});
  const cancel = el('button', {class: 'danger', id: 'cancel-job', disabled: true},
                    'Cancel job');
  const savepoint = el('button', {id: 'trigger-savepoint', disabled: true},
                       'Trigger savepoint');
  const graphBox = el('div', {class: 'graph-wrap', id: 'graph'});
  const tabs = el('nav', {class: 'tabs'});
  const tabBody = el('div', {id: 'tab-body'});
  const legend = el('span', {class: 'legend'}, 'backpressure:',
    bpBadge('ok'), bpBadge('low'), bpBadge('high'), bpBadge(null));
  view.append(
    el('section', {class: 'card jobhead'},
      el('div', {}, el('div', {class: 'title'}, name, stateBox), facts),
      el('div', {class: 'actions'}, savepoint, cancel)),
    el('section', {class: 'card'},
      el('h2', {}, 'Job graph', el('span', {class: 'aside'}, legend)), graphBox),
    el('section', {class: 'card'}, tabs, tabBody));

  cancel.addEventListener('click', () => dialog(
    'Cancel job?', el('p', {}, `Job ${st.job ? st.job.name : jid} stops; its subtasks are canceled.`),
    'Cancel job', 'danger', async () => {
      const r = await api(`/jobs/${jid}?mode=cancel`, {method: 'PATCH'});
      toast(r.ok ? 'Cancel requested.' : 'Cancel failed: ' + problem(r), !r.ok);
      tick();
    }));
  savepoint.addEventListener('click', () => {
    const dir = el('input', {type: 'text', id: 'savepoint-dir',
                             placeholder: 'default: state.savepoints.dir'});
    const stop = el('input', {type: 'checkbox', id: 'savepoint-cancel'});
    dialog('Trigger a savepoint', [
      el('label', {for: 'savepoint-dir'}, 'Target directory'), dir,
      el('label', {}, stop, ' cancel the job once the savepoint is taken')],
    'Trigger', 'primary', () => triggerSavepoint(jid, dir.value.trim(), stop.checked));
  });

  function pick(id) {
    location.hash = `#/jobs/${jid}/subtasks/${encodeURIComponent(id)}`;
  }

  function header(job) {
    const state = job.state || 'UNKNOWN';
    name.textContent = job.name || jid;
    stateBox.replaceChildren(stateBadge(state, 'job-state'));
    const fact = (label, value) => el('span', {}, label + ' ', el('b', {}, value));
    refill(facts, JSON.stringify([job['start-time'], job['end-time'], job.duration]), () => [
      fact('Job ID', el('span', {class: 'mono'}, jid)),
      fact('Started', fmtTime(job['start-time'])),
      num(job['end-time']) && job['end-time'] > 0
        ? fact('Ended', fmtTime(job['end-time'])) : null,
      fact('Duration', fmtDuration(job.duration))].filter(Boolean));
    const ended = ENDED.has(state);
    cancel.disabled = ended;
    savepoint.disabled = ended;
  }

  function tabStrip() {
    const sel = st.route.vertex || (st.job && st.job.vertices && st.job.vertices[0]
                                    && st.job.vertices[0].id);
    refill(tabs, st.route.tab + '|' + sel, () => TABS.map(([t, label]) =>
      el('a', {href: `#/jobs/${jid}/${t}` + ((t === 'subtasks' || t === 'watermarks') && sel
                 ? '/' + encodeURIComponent(sel) : ''),
               class: t === st.route.tab ? 'active' : null, 'data-tab': t},
         label)));
  }

  /// Records per second out of each vertex, from two successive answers.
  function rates(job) {
    const now = num(job.now) ? job.now : Date.now();
    const counts = new Map((job.vertices || []).map(
      (v) => [v.id, (v.metrics || {})['write-records']]));
    if (st.last && now > st.last.now)
      for (const [id, n] of counts) {
        const before = st.last.counts.get(id);
        if (num(n) && num(before))
          st.rates.set(id, (n - before) * 1000 / (now - st.last.now));
      }
    st.last = {now, counts};
  }

  async function backpressure(job) {
    const out = new Map();
    if (ENDED.has(job.state)) return out;
    const vs = Array.isArray(job.vertices) ? job.vertices : [];
    const answers = await Promise.all(vs.map((v) =>
      api(`/jobs/${jid}/vertices/${encodeURIComponent(v.rest || v.id)}/backpressure`)));
    vs.forEach((v, k) => {
      const b = answers[k].ok && answers[k].body;
      if (b && b['backpressure-level']) out.set(v.id, b['backpressure-level']);
      if (b && Array.isArray(b.subtasks)) out.set(v.id + '#subtasks', b.subtasks);
    });
    return out;
  }

  /// Each vertex's subtasks' input watermarks (BigInts by subtask) and
  /// their least (Flink's "Low Watermark"), from the REST API.
  async function watermarks(job) {
    const out = new Map();
    if (ENDED.has(job.state)) return out;
    const vs = Array.isArray(job.vertices) ? job.vertices : [];
    const answers = await Promise.all(vs.map((v) =>
      api(`/jobs/${jid}/vertices/${encodeURIComponent(v.rest || v.id)}/watermarks`)));
    vs.forEach((v, k) => {
      const list = answers[k].ok && Array.isArray(answers[k].body) ? answers[k].body : [];
      const subtasks = [];
      for (const m of list) {
        const at = /^([0-9]+)\.currentInputWatermark$/.exec(m.id || '');
        if (!at) continue;
        try { subtasks.push([Number(at[1]), BigInt(m.value)]); } catch (e) { /* skip */ }
      }
      if (!subtasks.length) return;
      const low = subtasks.reduce((a, [, w]) => (w < a ? w : a), subtasks[0][1]);
      out.set(v.id, {low, subtasks});
    });
    return out;
  }

  async function renderTab(job, bp, wm) {
    const tab = st.route.tab;
    if (tab === 'subtasks') return subtasksTab(tabBody, jid, job, st.route.vertex, bp);
    if (tab === 'watermarks') return watermarksTab(tabBody, jid, job, st.route.vertex, wm);
    if (tab === 'checkpoints') return checkpointsTab(tabBody, jid);
    if (tab === 'exceptions') return exceptionsTab(tabBody, jid);
    return verticesTab(tabBody, job, bp, st.rates, pick, wm);
  }

  return {
    jid,
    show(r) { st.route = r; tabStrip(); },
    async refresh() {
      const r = await api('/jobs/' + jid);
      if (!r.ok || !r.body) {
        stateBox.replaceChildren();
        refill(graphBox, 'bad' + r.status, () => unavailable(r));
        return r.status !== 0;
      }
      const job = byName(r.body);
      st.job = job;
      header(job);
      rates(job);
      const [bp, wm] = await Promise.all([backpressure(job), watermarks(job)]);
      const model = graphModel(job);
      const key = JSON.stringify([model.ids, model.edges]);
      if (key !== st.graphKey) {
        const g = drawGraph(model, pick);
        st.graphKey = key;
        st.parts = g.parts;
        graphBox.replaceChildren(model.ids.length ? g.svg
          : el('p', {class: 'empty'}, 'This job has no vertices.'));
      }
      const sel = st.route.tab === 'subtasks' || st.route.tab === 'watermarks'
        ? st.route.vertex || (model.ids[0] || null) : null;
      updateGraph(st.parts, job, bp, sel);
      tabStrip();
      await renderTab(job, bp, wm);
      return true;
    }};
}

function verticesTab(box, job, bp, rates, pick, wm) {
  const vs = Array.isArray(job.vertices) ? job.vertices : [];
  const rows = vs.map((v) => {
    const m = v.metrics || {};
    return {attrs: {class: 'clickable', 'data-vertex-row': v.id,
                    onclick: () => pick(v.id)},
            cells: [el('b', {}, v.id), stateBadge(v.status),
                    num(v.parallelism) ? v.parallelism : '–',
                    fmtCount(m['read-records']), fmtCount(m['write-records']),
                    fmtBytes(m['read-bytes']), fmtBytes(m['write-bytes']),
                    rates.has(v.id) ? fmtCount(rates.get(v.id)) + '/s' : '–',
                    bpBadge(bp.get(v.id)),
                    el('span', {'data-watermark': v.id},
                       fmtWatermark(wm.has(v.id) ? wm.get(v.id).low : undefined))]};
  });
  const lows = [...wm].map(([id, w]) => [id, String(w.low)]);
  const key = JSON.stringify(['v', vs, [...bp], [...rates], lows]);
  refill(box, key, () => vs.length ? table(
    [['Vertex'], ['Status'], ['Parallelism', 1], ['Records in', 1],
     ['Records out', 1], ['Bytes in', 1], ['Bytes out', 1], ['Out rate', 1],
     ['Backpressure'], ['Low watermark']], rows)
    : el('p', {class: 'empty'}, 'No vertices.'));
}

async function subtasksTab(box, jid, job, vid, bp) {
  const vs = Array.isArray(job.vertices) ? job.vertices : [];
  const id = vid || (vs[0] && vs[0].id);
  if (!id) return refill(box, 'none', () => el('p', {class: 'empty'}, 'No vertices.'));
  const r = await api(`/jobs/${jid}/vertices/${encodeURIComponent(restId(job, id))}`);
  const subs = r.ok && r.body && Array.isArray(r.body.subtasks) ? r.body.subtasks : null;
  const levels = new Map((bp.get(id + '#subtasks') || []).map((s) => [s.subtask, s]));
  const picker = el('p', {class: 'muted'}, 'Vertex: ', vs.map((v, k) => [
    k ? ' · ' : '', v.id === id ? el('b', {}, v.id)
      : el('a', {href: `#/jobs/${jid}/subtasks/${encodeURIComponent(v.id)}`}, v.id)]));
  refill(box, JSON.stringify(['s', id, r.status, subs, [...levels]]), () => [picker,
    !subs ? unavailable(r) : table(
      [['Subtask', 1], ['Status'], ['Attempt', 1], ['Host'], ['Task manager'],
       ['Started'], ['Duration', 1], ['Records in', 1], ['Records out', 1],
       ['Backpressure']],
      subs.map((s) => {
        const m = s.metrics || {};
        const b = levels.get(s.subtask);
        return {attrs: {'data-subtask': s.subtask}, cells: [
          s.subtask, stateBadge(s.status), num(s.attempt) ? s.attempt : '–',
          s.host || '–', el('span', {class: 'mono'}, s['taskmanager-id'] || '–'),
          fmtTime(s['start-time']), fmtDuration(s.duration),
          fmtCount(m['read-records']), fmtCount(m['write-records']),
          b ? [bpBadge(b['backpressure-level']),
               num(b.ratio) ? ` ${Math.round(b.ratio * 100)}%` : ''] : bpBadge(null)]};
      }))]);
}

/// The input watermark of each subtask of one vertex (Flink's Watermarks
/// tab); a vertex's least one is its low watermark in the Vertices tab.
function watermarksTab(box, jid, job, vid, wm) {
  const vs = Array.isArray(job.vertices) ? job.vertices : [];
  const id = vid || (vs[0] && vs[0].id);
  if (!id) return refill(box, 'none', () => el('p', {class: 'empty'}, 'No vertices.'));
  const w = wm.get(id);
  const picker = el('p', {class: 'muted'}, 'Vertex: ', vs.map((v, k) => [
    k ? ' · ' : '', v.id === id ? el('b', {}, v.id)
      : el('a', {href: `#/jobs/${jid}/watermarks/${encodeURIComponent(v.id)}`}, v.id)]));
  const rows = w ? w.subtasks.map(([i, value]) => ({
    attrs: {'data-subtask-watermark': `${id}/${i}`},
    cells: [i, fmtWatermark(value)]})) : [];
  refill(box, JSON.stringify(['w', id, rows.map((r) => r.cells)]), () => [picker,
    rows.length ? table([['Subtask', 1], ['Input watermark (UTC)']], rows)
      : el('p', {class: 'empty'}, ENDED.has(job.state)
          ? 'The job has ended: its subtasks report no watermarks.'
          : 'No watermarks reported for this vertex.')]);
}

async function checkpointsTab(box, jid) {
  const r = await api(`/jobs/${jid}/checkpoints`);
  const c = r.ok && r.body ? r.body : null;
  refill(box, JSON.stringify(['c', r.status, c]), () => {
    if (!c) return unavailable(r);
    const n = c.counts || {};
    const latest = c.latest && c.latest.completed;
    const history = Array.isArray(c.history) ? c.history : [];
    const count = (label, v) => el('div', {}, el('b', {}, num(v) ? v : '–'), label);
    return [
      el('div', {class: 'counts', id: 'checkpoint-counts'},
        count('completed', n.completed), count('in progress', n.in_progress),
        count('failed', n.failed), count('total', n.total),
        count('restored', n.restored)),
      el('p', {class: 'muted'}, latest
        ? `Latest completed: #${latest.id}` +
          (latest.external_path ? ` at ${latest.external_path}` : '')
        : 'No checkpoint has completed yet.'),
      history.length ? table(
        [['ID', 1], ['Status'], ['Kind'], ['Triggered'], ['Duration', 1],
         ['State size', 1], ['Acknowledged', 1]],
        history.map((h) => ({attrs: {'data-checkpoint': h.id}, cells: [
          h.id, stateBadge(h.status), h.is_savepoint ? 'savepoint' : 'checkpoint',
          fmtTime(h.trigger_timestamp), fmtDuration(h.end_to_end_duration),
          fmtBytes(h.state_size),
          `${h.num_acknowledged_subtasks ?? '–'} / ${h.num_subtasks ?? '–'}`]})))
        : el('p', {class: 'empty'}, 'No checkpoints yet.')];
  });
}

async function exceptionsTab(box, jid) {
  const r = await api(`/jobs/${jid}/exceptions`);
  const x = r.ok && r.body ? r.body : null;
  refill(box, JSON.stringify(['x', r.status, x]), () => {
    if (!x) return unavailable(r);
    const entries = x.exceptionHistory && Array.isArray(x.exceptionHistory.entries)
      ? x.exceptionHistory.entries : [];
    if (!x['root-exception'] && !entries.length)
      return el('p', {class: 'empty', id: 'no-exceptions'}, 'No exceptions.');
    return [
      x['root-exception'] ? [el('h2', {}, 'Root exception',
        el('span', {class: 'aside'}, fmtTime(x.timestamp))),
        el('pre', {class: 'trace'}, x['root-exception'])] : null,
      entries.length ? table([['Time'], ['Exception'], ['Task'], ['Location']],
        entries.map((e) => [fmtTime(e.timestamp),
          el('details', {}, el('summary', {}, e.exceptionName || 'exception'),
             el('pre', {class: 'trace'}, e.stacktrace || '')),
          e.taskName || '–', e.location || '–'])) : null];
  });
}

async function triggerSavepoint(jid, dir, cancelJob) {
  const body = {'cancel-job': cancelJob};
  if (dir) body['target-directory'] = dir;
  const r = await api(`/jobs/${jid}/savepoints`, {
    method: 'POST', headers: {'Content-Type': 'application/json'},
    body: JSON.stringify(body)});
  const rid = r.ok && r.body && r.body['request-id'];
  if (!rid) { toast('Savepoint failed: ' + problem(r), true); return; }
  toast('Savepoint triggered; waiting for it…');
  watchSavepoint(jid, rid); // the dialog closes meanwhile
}

/// Tells how savepoint `rid` ended, asking every second for two minutes.
async function watchSavepoint(jid, rid) {
  for (let i = 0; i < 120; i++) {
    await new Promise((done) => setTimeout(done, 1000));
    const s = await api(`/jobs/${jid}/savepoints/${encodeURIComponent(rid)}`);
    if (!s.ok || !s.body) return;
    const status = s.body.status && s.body.status.id;
    if (status !== 'COMPLETED') continue;
    const op = s.body.operation || {};
    if (op.location) toast('Savepoint written to ' + op.location);
    else toast('Savepoint failed: ' + JSON.stringify(op['failure-cause'] || op), true);
    return;
  }
}

// ------------------------------------------------------ routing, polling

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').filter(Boolean)
    .map((p) => { try { return decodeURIComponent(p); } catch (e) { return p; } });
  if (parts[0] === 'jobs' && parts[1]) {
    const tab = TABS.some(([t]) => t === parts[2]) ? parts[2] : 'vertices';
    return {page: 'job', jid: parts[1], tab, vertex: parts[3] || null};
  }
  if (parts[0] === 'jobs') return {page: 'jobs'};
  if (parts[0] === 'taskmanagers') return {page: 'taskmanagers'};
  return {page: 'overview'};
}

const PAGES = {overview: overviewPage, jobs: jobsPage,
               taskmanagers: taskmanagersPage, job: jobPage};
let current = null;
let busy = false;

function show() {
  const route = parseRoute();
  for (const a of document.querySelectorAll('[data-nav]'))
    a.classList.toggle('active', a.dataset.nav === route.page ||
                       (route.page === 'job' && a.dataset.nav === 'jobs'));
  if (current && route.page === 'job' && current.jid === route.jid) {
    current.show(route); // another tab of the same job: keep its graph
  } else {
    const view = document.getElementById('view');
    view.replaceChildren();
    current = PAGES[route.page](view, route);
  }
  tick();
}

function setLive(up) {
  const live = document.getElementById('live');
  live.className = 'live ' + (up ? 'up' : 'down');
  document.getElementById('live-text').textContent = up
    ? 'live · ' + fmtTime(Date.now()).slice(11) : 'jobmanager not answering';
}

/// One refresh of the current page; a page changed meanwhile gets its own.
async function tick() {
  if (busy || !current) return;
  busy = true;
  const page = current;
  try {
    setLive(await page.refresh());
  } catch (e) {
    console.error(e);
    setLive(false);
  } finally {
    busy = false;
  }
  if (page !== current) tick();
}

window.addEventListener('hashchange', show);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') tick();
});
setInterval(() => { if (document.visibilityState === 'visible') tick(); }, POLL_MS);
show();
