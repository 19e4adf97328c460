// One prom-client Registry per service instance, never the global default registry: `blockx up` runs a
// Coordinator and several Workers in one process, and each must own its metric families (the same
// names) without colliding. Every sample carries the instance's identity as default labels
// `{service, deployment, instance}`; prom-client applies them when it renders, so `instance` (a
// Worker's advertised address, known only after bind) can be set once the service listens.

import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

export interface ServiceLabels {
  /** `worker`, `coordinator`, ... */
  readonly service: string;
  readonly deployment: string;
  /** The advertised address; empty until the service is bound. */
  readonly instance?: string;
}

export interface ServiceRegistryOptions {
  /**
   * Also collect the process metrics of prom-client (`process_*`, `nodejs_*`: CPU, memory, event-loop
   * lag). One registry per process should do it; several workers in one process would repeat them.
   */
  readonly processMetrics?: boolean;
}

export function createServiceRegistry(labels: ServiceLabels, options: ServiceRegistryOptions = {}): Registry {
  const registry = new Registry();
  setServiceLabels(registry, labels);
  if (options.processMetrics === true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Replaces the registry's default labels (an empty `instance` is left out, not rendered as ""). */
export function setServiceLabels(registry: Registry, labels: ServiceLabels): void {
  const { service, deployment, instance } = labels;
  registry.setDefaultLabels(
    instance === undefined || instance === '' ? { service, deployment } : { service, deployment, instance },
  );
}

/**
 * A Counter that mirrors a running total kept elsewhere (the dispatcher's stats, the IO scope's
 * counters), read only when Prometheus scrapes: the hot path pays nothing. Each scrape adds the growth
 * since the previous one; a total that went backwards (its source was replaced) counts from its new
 * value, so the counter itself never decreases. `read` returning undefined means "no source": the
 * counter stays where it is.
 */
export function cumulativeCounter(
  registry: Registry,
  name: string,
  help: string,
  read: () => number | undefined,
): Counter {
  let last = 0;
  const counter: Counter = new Counter({
    name,
    help,
    registers: [registry],
    collect: () => {
      const total = read();
      if (total === undefined || !Number.isFinite(total)) return;
      const delta = total >= last ? total - last : total;
      last = total;
      if (delta > 0) counter.inc(delta);
    },
  });
  return counter;
}
