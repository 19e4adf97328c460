// The throughput and failure charts: bar charts drawn as inline SVG (no chart library). The geometry
// is computed by `barGeometry` (pure, unit-tested in test/unit/services/dashboard/page-format.test.ts);
// `drawBarChart` turns it into SVG elements. Every text goes through textContent.

/* global document */
const SVG = 'http://www.w3.org/2000/svg';

/** The smallest "nice" number (1, 2, 5 × 10^k) at or above `v`, at least 1. */
export function niceCeiling(v) {
  if (!(v > 1)) return 1;
  const exp = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * exp >= v) return m * exp;
  return 10 * exp;
}

/**
 * Bars for `values` (oldest first) in a `width` × `height` plot area: one slot per value, a 1-unit gap,
 * heights scaled to niceCeiling(max).
 */
export function barGeometry(values, width, height) {
  const yMax = niceCeiling(Math.max(0, ...values));
  const slot = values.length > 0 ? width / values.length : width;
  const gap = slot > 3 ? 1 : 0;
  const bars = values.map((v, i) => {
    const h = (Math.max(0, v) / yMax) * height;
    return { x: i * slot, y: height - h, width: Math.max(0.5, slot - gap), height: h, value: v };
  });
  return { yMax, bars };
}

function svg(tag, attrs) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

function label(x, y, text, anchor = 'start') {
  const t = svg('text', { x, y, 'text-anchor': anchor, class: 'axis' });
  t.textContent = text;
  return t;
}

/**
 * Replaces the content of `container` with a bar chart of `points` (ThroughputPoint[]), reading
 * `field` ('succeeded' or 'failed'); `kind` is a CSS class for the colour.
 */
export function drawBarChart(container, points, field, kind) {
  const W = 560;
  const H = 160;
  const left = 36;
  const bottom = 18;
  const plotW = W - left - 4;
  const plotH = H - bottom - 6;
  const values = points.map((p) => p[field]);
  const { yMax, bars } = barGeometry(values, plotW, plotH);
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', class: `bars ${kind}` });
  const total = values.reduce((a, b) => a + b, 0);
  const title = svg('title', {});
  title.textContent = `${total} tasks ${field} in the last ${points.length} buckets`;
  root.append(title);
  const plot = svg('g', { transform: `translate(${left},6)` });
  plot.append(svg('line', { x1: 0, y1: plotH, x2: plotW, y2: plotH, class: 'baseline' }));
  plot.append(svg('line', { x1: 0, y1: 0, x2: plotW, y2: 0, class: 'grid' }));
  for (const b of bars) {
    if (b.height <= 0) continue;
    const rect = svg('rect', { x: b.x, y: b.y, width: b.width, height: b.height, class: 'col' });
    const tip = svg('title', {});
    tip.textContent = String(b.value);
    rect.append(tip);
    plot.append(rect);
  }
  root.append(plot);
  root.append(label(left - 4, 14, String(yMax), 'end'), label(left - 4, plotH + 6, '0', 'end'));
  if (points.length > 0) {
    const spanMs = points.length * points[0].bucketMs;
    root.append(label(left, H - 4, `−${Math.round(spanMs / 60_000) || '<1'} min`));
    root.append(label(W - 4, H - 4, 'now', 'end'));
  } else {
    root.append(label(left + plotW / 2, plotH / 2, 'no data yet', 'middle'));
  }
  container.replaceChildren(root);
}
