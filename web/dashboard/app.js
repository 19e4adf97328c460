// The dashboard page's entry (docs/dashboard.md): listens to /api/events (Server-Sent Events) and
// renders every `snapshot` event. EventSource reconnects by itself after a dropped stream (the server's
// `retry:`); when the server refused the stream (503: too many pages) or is gone, the source is closed
// and this script opens a new one with a growing delay. While no stream is open the page says so and
// shows the last snapshot it had, greyed out.
/* global document, window, EventSource */
import { formatClock } from './format.js';
import { renderSnapshot } from './render.js';

const MIN_RETRY_MS = 1_000;
const MAX_RETRY_MS = 15_000;

let retryMs = MIN_RETRY_MS;
let source;
/** When the stream was lost (UTC ms); undefined while live. */
let downSince;

function setConnection(state, text) {
  const node = document.getElementById('connection');
  node.textContent = text;
  node.className = `pill pill-${state}`;
  document.body.classList.toggle('disconnected', state === 'bad');
}

function connect() {
  source = new EventSource('api/events');
  source.addEventListener('open', () => {
    retryMs = MIN_RETRY_MS;
    downSince = undefined;
    setConnection('ok', 'live');
  });
  source.addEventListener('snapshot', (event) => {
    let snapshot;
    try {
      snapshot = JSON.parse(event.data);
    } catch {
      return;
    }
    renderSnapshot(snapshot);
    document.body.dataset.snapshotAt = String(snapshot.atMs);
  });
  source.addEventListener('error', () => {
    downSince ??= Date.now();
    const since = formatClock(downSince);
    if (source.readyState === EventSource.CLOSED) {
      setConnection('bad', `disconnected since ${since}: retrying in ${Math.round(retryMs / 1000)} s`);
      window.setTimeout(connect, retryMs);
      retryMs = Math.min(MAX_RETRY_MS, retryMs * 2);
    } else {
      setConnection('bad', `disconnected since ${since}: reconnecting…`);
    }
  });
}

connect();
