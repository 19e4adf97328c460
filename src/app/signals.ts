// Where a long-running command gets its stop signals from: the process by default, an EventEmitter in
// tests. SIGINT and SIGTERM both mean "stop"; what a second one means is the command's business. SIGHUP
// means "read the config file again" (config-reload.ts).
export type TerminationSignal = 'SIGTERM' | 'SIGINT';

export interface SignalSource {
  on(signal: TerminationSignal | 'SIGHUP', listener: () => void): unknown;
  off(signal: TerminationSignal | 'SIGHUP', listener: () => void): unknown;
}

const SIGNALS: readonly TerminationSignal[] = ['SIGTERM', 'SIGINT'];

/** Calls `listener` on every SIGINT / SIGTERM until the returned function removes it. */
export function onTermination(
  listener: (signal: TerminationSignal) => void,
  source: SignalSource = process,
): () => void {
  const handlers = SIGNALS.map((signal) => [signal, () => listener(signal)] as const);
  for (const [signal, handler] of handlers) source.on(signal, handler);
  return () => {
    for (const [signal, handler] of handlers) source.off(signal, handler);
  };
}

/** Resolves with the first SIGINT or SIGTERM; its listeners are removed by then. */
export function terminationSignal(source: SignalSource = process): Promise<TerminationSignal> {
  return new Promise((resolve) => {
    const off = onTermination((signal) => {
      off();
      resolve(signal);
    }, source);
  });
}
