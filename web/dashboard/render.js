// Renders one DashboardSnapshot (src/contracts/dashboard.ts) into the page. Every string from the
// snapshot goes into the DOM through textContent or an attribute value, never as markup; widths of
// bars are set through the CSSOM (element.style), which the page's Content-Security-Policy allows.
/* global document */
import { drawBarChart } from './charts.js';
import {
  backfillJobs,
  backfillProgress,
  formatAge,
  formatClock,
  formatDuration,
  formatLag,
  formatPercent,
  formatReorg,
  shortId,
  slotsUsed,
} from './format.js';

/** `el('td', {class: 'num'}, 'text', child)`: an element with attributes and text or element children. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null && v !== false) node.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    node.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return node;
}

const clamp01 = (v) => Math.min(1, Math.max(0, Number.isFinite(v) ? v : 0));

/** A horizontal bar: `fraction` filled, a red line marker at `redLine` (a fraction) when given. */
function bar(fraction, text, redLine) {
  const over = redLine !== undefined && fraction > redLine;
  const fill = el('span', { class: 'fill' });
  fill.style.width = `${clamp01(fraction) * 100}%`;
  const node = el('span', { class: `bar${over ? ' over' : ''}` }, fill);
  if (redLine !== undefined && redLine < 1) {
    const mark = el('span', { class: 'redline', title: `red line ${formatPercent(redLine)}` });
    mark.style.left = `${clamp01(redLine) * 100}%`;
    node.append(mark);
  }
  return el('span', { class: 'meter' }, node, el('span', { class: 'meter-text' }, text));
}

function emptyRow(tbody, columns, text) {
  tbody.replaceChildren(el('tr', {}, el('td', { colspan: columns, class: 'empty' }, text)));
}

function card(label, value, note) {
  return el(
    'div',
    { class: 'card' },
    el('div', { class: 'card-label' }, label),
    el('div', { class: 'card-value' }, value),
    note ? el('div', { class: 'card-note' }, note) : null,
  );
}

export function renderSummary(root, s) {
  const ws = s.cluster.workers;
  const routable = ws.filter((w) => w.routable).length;
  const slots = ws.reduce((a, w) => a + w.taskSlots, 0);
  const used = ws.reduce((a, w) => a + slotsUsed(w), 0);
  const running = ws.reduce((a, w) => a + w.runningTasks, 0);
  const ok = s.throughput.reduce((a, p) => a + p.succeeded, 0);
  const failed = s.throughput.reduce((a, p) => a + p.failed, 0);
  const span = s.throughput.length > 0 ? s.throughput.length * s.throughput[0].bucketMs : 0;
  const versions = [...new Set(ws.map((w) => w.codeVersion).filter((v) => v))];
  root.replaceChildren(
    card('workers routable', `${routable} / ${ws.length}`),
    card('slots in use', `${used} / ${slots}`),
    card('tasks running', String(running)),
    card('succeeded', String(ok), span ? `last ${formatDuration(span)}` : undefined),
    card('failed', String(failed), span ? `last ${formatDuration(span)}` : undefined),
    card(
      'code version',
      versions.length === 0
        ? '–'
        : versions.length === 1
          ? shortId(versions[0], 14)
          : `${versions.length} versions`,
      versions.length > 1 ? 'workers disagree' : undefined,
    ),
  );
}

export function renderWorkers(tbody, note, s) {
  const { cluster } = s;
  const limits = cluster.limits;
  note.textContent = cluster.ready
    ? `${cluster.workers.length} workers in the coordinator's view` +
      (limits
        ? ` · red lines: cpu ${formatPercent(limits.cpuRedLine)}, memory ${formatPercent(limits.memoryRedLine)}, error rate ${formatPercent(limits.errorRateRedLine)}`
        : '')
    : `coordinator not ready: ${cluster.unavailableReason || 'no view of the workers yet'}`;
  if (cluster.workers.length === 0) return emptyRow(tbody, 10, 'no workers registered');
  const rows = cluster.workers.map((w) => {
    const used = slotsUsed(w);
    const stale = limits && w.heartbeatAgeMs > limits.heartbeatTimeoutMs / 2;
    return el(
      'tr',
      { 'data-worker': w.workerAddr, class: w.routable ? '' : 'not-routable' },
      el('td', { class: 'mono' }, w.workerAddr),
      el('td', {}, bar(w.taskSlots > 0 ? used / w.taskSlots : 0, `${used} / ${w.taskSlots}`)),
      el('td', { class: 'num' }, String(w.runningTasks)),
      el('td', {}, bar(w.cpuPercent, formatPercent(w.cpuPercent), limits?.cpuRedLine)),
      el('td', {}, bar(w.memoryPercent, formatPercent(w.memoryPercent), limits?.memoryRedLine)),
      el('td', {}, bar(w.errorRate, formatPercent(w.errorRate), limits?.errorRateRedLine)),
      el(
        'td',
        {},
        w.routable
          ? el('span', { class: 'badge ok' }, 'routable')
          : el(
              'span',
              { class: 'why' },
              el('span', { class: 'badge bad' }, w.notRoutableCode || 'not routable'),
              ' ',
              w.notRoutableReason,
            ),
      ),
      el(
        'td',
        {},
        w.breakerState === 'closed' ? 'closed' : el('span', { class: 'badge warn' }, w.breakerState),
      ),
      el(
        'td',
        { class: 'mono', title: w.codeVersionError || w.codeVersion || '' },
        w.codeVersion ? shortId(w.codeVersion, 14) : '–',
        w.codeVersionError ? el('span', { class: 'badge warn' }, 'not deployed') : null,
      ),
      el(
        'td',
        { class: stale ? 'num stale' : 'num' },
        formatAge(s.cluster.nowMs - w.heartbeatAgeMs, s.cluster.nowMs),
      ),
    );
  });
  tbody.replaceChildren(...rows);
}

export function renderCharts(s) {
  drawBarChart(document.getElementById('chart-succeeded'), s.throughput, 'succeeded', 'ok');
  drawBarChart(document.getElementById('chart-failed'), s.throughput, 'failed', 'bad');
  const bucket = s.throughput[0]?.bucketMs;
  for (const node of document.querySelectorAll('.bucket'))
    node.textContent = bucket ? formatDuration(bucket) : 'bucket';
}

export function renderTasks(tbody, count, s) {
  const failed = s.recentTasks.filter((t) => t.state === 'FAILED').length;
  count.textContent = s.recentTasks.length === 0 ? '' : `latest ${s.recentTasks.length}, ${failed} failed`;
  if (s.recentTasks.length === 0) return emptyRow(tbody, 7, 'no tasks yet');
  const rows = s.recentTasks.map((t) => {
    const ended = t.state === 'SUCCEEDED' || t.state === 'FAILED';
    const duration = ended
      ? formatDuration(t.durationMs)
      : t.startedAtMs
        ? `${formatDuration(s.atMs - t.startedAtMs)} so far`
        : '–';
    return el(
      'tr',
      { 'data-task': t.taskId },
      el('td', { class: 'mono', title: t.taskId }, shortId(t.taskId, 24)),
      el('td', {}, el('span', { class: `badge state-${t.state.toLowerCase()}` }, t.state)),
      el('td', { class: 'mono' }, t.workerAddr),
      el('td', {}, t.builder),
      el('td', { class: 'num' }, formatClock(t.startedAtMs)),
      el('td', { class: 'num' }, duration),
      el(
        'td',
        { class: 'failure' },
        t.failureCode ? el('strong', {}, t.failureCode) : null,
        t.failureMessage
          ? el('span', { class: 'message', title: t.failureMessage }, ` ${t.failureMessage}`)
          : null,
      ),
    );
  });
  tbody.replaceChildren(...rows);
}

/** "run abc: started 12:00:01, 40% done, finished" per run, for the job cell's title. */
function runsTitle(jobId, runs) {
  const lines = runs.map(
    (r) =>
      `run ${r.run}: started ${formatClock(r.startedAtMs)}, ${formatPercent(backfillProgress(r))} done` +
      (r.finished ? ', finished' : ''),
  );
  return [jobId, ...lines].join('\n');
}

export function renderBackfills(tbody, s) {
  if (s.backfills.length === 0) return emptyRow(tbody, 8, 'no backfill jobs reported');
  // One row a job: its latest run's counts; earlier runs (reruns of the same job id) in the cell's title.
  const rows = backfillJobs(s.backfills).map(({ latest: j, runs }) => {
    const done = backfillProgress(j);
    return el(
      'tr',
      { 'data-job': j.jobId, 'data-runs': runs.length },
      el(
        'td',
        { class: 'mono', title: runsTitle(j.jobId, runs) },
        shortId(j.jobId, 20),
        j.finished ? el('span', { class: 'badge ok' }, 'finished') : null,
        runs.length > 1 ? el('span', { class: 'badge' }, `${runs.length} runs`) : null,
      ),
      el(
        'td',
        { class: 'num' },
        `${j.fromBlock}–${j.toBlock} (${j.units} ${j.per === 'bundle' ? 'bundles' : 'blocks'})`,
      ),
      el('td', {}, bar(done, formatPercent(done))),
      el('td', { class: 'num' }, String(j.succeeded)),
      el('td', { class: j.failed > 0 ? 'num bad-text' : 'num' }, String(j.failed)),
      el('td', { class: 'num' }, String(j.skipped)),
      el('td', { class: 'num' }, String(j.inFlight)),
      el('td', { class: 'num' }, formatAge(j.updatedAtMs, s.atMs)),
    );
  });
  tbody.replaceChildren(...rows);
}

const JOB_STATE_BADGE = { running: 'ok', failed: 'bad', stopped: 'warn' };

/**
 * One row a follow job (docs/dashboard.md § Follow jobs): where it is against its chain's head, its last
 * reorg, who runs it under which fencing term, how often this process restarted it, its last error.
 */
export function renderFollowJobs(tbody, s) {
  const jobs = s.followJobs ?? [];
  if (jobs.length === 0) return emptyRow(tbody, 9, 'no follow jobs in the storage database');
  const rows = jobs.map((j) => {
    const r = j.lastReorg;
    return el(
      'tr',
      { 'data-follow-job': j.jobId, 'data-state': j.state },
      el(
        'td',
        { class: 'mono', title: `${j.jobId} (${j.kind}, chain ${j.chainId})` },
        shortId(j.jobId, 20),
        ' ',
        el('span', { class: `badge ${JOB_STATE_BADGE[j.state] ?? ''}` }, j.state),
        el('span', { class: 'badge' }, j.kind),
      ),
      el('td', { class: 'num', 'data-col': 'head' }, j.head === null ? '–' : String(j.head)),
      el('td', { class: 'num', 'data-col': 'finalized' }, j.finalized === null ? '–' : String(j.finalized)),
      el(
        'td',
        { class: j.lagBlocks > 0 ? 'num warn-text' : 'num', 'data-col': 'lag' },
        formatLag(j.lagBlocks, j.lagSeconds),
      ),
      el(
        'td',
        { 'data-col': 'reorg', title: r ? `tip ${r.oldTip} → ${r.newTip ?? 'none'}` : '' },
        formatReorg(r, s.atMs),
        j.reorgs > 0
          ? el('span', { class: 'muted' }, ` · ${j.reorgs} in all, deepest ${j.deepestReorg}`)
          : null,
      ),
      el(
        'td',
        { class: 'mono', 'data-col': 'runner' },
        j.runner ?? '–',
        j.term === null ? null : el('span', { class: 'badge', title: 'fencing term' }, `term ${j.term}`),
      ),
      el('td', { class: 'num', 'data-col': 'restarts' }, j.restarts === null ? '–' : String(j.restarts)),
      el(
        'td',
        { class: 'failure', 'data-col': 'error' },
        j.lastError ? el('span', { class: 'message', title: j.lastError }, j.lastError) : null,
      ),
      el('td', { class: 'num' }, formatAge(j.updatedMs, s.atMs)),
    );
  });
  tbody.replaceChildren(...rows);
}

export function renderSnapshot(s) {
  const coordinator = document.getElementById('coordinator-state');
  coordinator.textContent = s.cluster.ready ? 'coordinator ready' : 'coordinator not ready';
  coordinator.className = `pill ${s.cluster.ready ? 'pill-ok' : 'pill-bad'}`;
  coordinator.title = s.cluster.unavailableReason || '';
  document.getElementById('updated').textContent = `snapshot ${formatClock(s.atMs)}`;
  renderSummary(document.getElementById('summary'), s);
  renderWorkers(document.querySelector('#workers tbody'), document.getElementById('cluster-note'), s);
  renderCharts(s);
  renderTasks(document.querySelector('#tasks tbody'), document.getElementById('tasks-count'), s);
  renderBackfills(document.querySelector('#backfills tbody'), s);
  renderFollowJobs(document.querySelector('#follow-jobs tbody'), s);
}
