// New heads as the node announces them (docs/ingest.md § Following the head): a WebSocket to the source's
// `wsUrl`, `eth_subscribe` to `newHeads`, and a flag raised by each notification. The follower waits on it
// between polls (`wait`): an announcement ends the wait at once, so a new block is ingested when the node
// has it rather than at the next poll. Polling goes on every `pollIntervalMs` whatever the socket does, so
// a node without subscriptions, a dropped socket or a silent one only costs that interval: the socket is
// opened again after 1 s, doubling to 30 s while it keeps failing. What a notification carries is not
// trusted: it only says "poll now"; the poll reads the head as before.
import WebSocket from 'ws';

/** The first wait before opening the socket again, and the most. */
export const NEW_HEADS_RECONNECT_MS = { initial: 1_000, max: 30_000 } as const;
/** How long the opening handshake may take before it counts as failed. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

export type NewHeadsState =
  | { readonly state: 'live' }
  | { readonly state: 'down'; readonly reason: string; readonly retryInMs: number };

export interface HeadAnnouncements {
  /**
   * Resolves true as soon as the node announces a head (at once when it did since the last call), false
   * after `ms` or when `signal` aborts.
   */
  wait(ms: number, signal?: AbortSignal): Promise<boolean>;
  /** Whether the subscription is confirmed and the socket open. */
  readonly live: boolean;
  close(): void;
}

export interface NewHeadsOptions {
  /** Told when the subscription is confirmed, and when it is lost (with why and when it is tried again). */
  readonly onState?: (s: NewHeadsState) => void;
}

/** Subscribes to `url`'s new heads; keeps trying while the follower runs (close() ends it). */
export function subscribeNewHeads(url: string, opts: NewHeadsOptions = {}): HeadAnnouncements {
  let announced = false;
  let live = false;
  let closed = false;
  let failures = 0;
  let socket: WebSocket | undefined;
  let reconnect: ReturnType<typeof setTimeout> | undefined;
  let waiter: ((value: boolean) => void) | undefined;

  const announce = (): void => {
    announced = true;
    waiter?.(true);
  };
  const down = (reason: string): void => {
    if (closed || reconnect !== undefined) return;
    live = false;
    socket?.removeAllListeners();
    socket?.on('error', () => {}); // a late error of the dropped socket is not ours to report
    socket?.terminate();
    socket = undefined;
    const retryInMs = Math.min(NEW_HEADS_RECONNECT_MS.max, NEW_HEADS_RECONNECT_MS.initial * 2 ** failures);
    failures++;
    opts.onState?.({ state: 'down', reason, retryInMs });
    reconnect = setTimeout(() => {
      reconnect = undefined;
      open();
    }, retryInMs);
    reconnect.unref();
  };
  const open = (): void => {
    if (closed) return;
    const ws = new WebSocket(url, { handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
    socket = ws;
    let subscription: string | undefined;
    ws.on('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    });
    ws.on('message', (data) => {
      let msg: {
        id?: unknown;
        result?: unknown;
        error?: { message?: unknown };
        method?: unknown;
        params?: unknown;
      };
      try {
        msg = JSON.parse(String(data)) as typeof msg;
      } catch {
        return;
      }
      if (msg.id === 1) {
        if (typeof msg.result === 'string') {
          subscription = msg.result;
          live = true;
          failures = 0;
          opts.onState?.({ state: 'live' });
          // Heads may have come while the socket was down: the follower looks at once.
          announce();
        } else down(`eth_subscribe refused: ${String(msg.error?.message ?? JSON.stringify(msg))}`);
        return;
      }
      const params = msg.params as { subscription?: unknown } | undefined;
      if (msg.method === 'eth_subscription' && params?.subscription === subscription) announce();
    });
    ws.on('error', (err) => down(err.message));
    ws.on('close', (code) => down(`the socket closed (${code})`));
  };
  open();

  return {
    get live() {
      return live;
    },
    wait(ms, signal) {
      if (announced) {
        announced = false;
        return Promise.resolve(true);
      }
      return new Promise<boolean>((resolve) => {
        const finish = (value: boolean): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          waiter = undefined;
          if (value) announced = false;
          resolve(value);
        };
        const onAbort = (): void => finish(false);
        const timer = setTimeout(() => finish(false), ms);
        if (signal?.aborted) return finish(false);
        signal?.addEventListener('abort', onAbort, { once: true });
        waiter = finish;
      });
    },
    close() {
      closed = true;
      live = false;
      if (reconnect !== undefined) clearTimeout(reconnect);
      socket?.removeAllListeners();
      socket?.on('error', () => {});
      socket?.terminate();
      waiter?.(false);
    },
  };
}
