// Metrics, wired the same way in every process: one Prometheus endpoint per process at
// `observability.prometheus.listenAddr` (empty: none), and one prom-client Registry per service, made
// here and handed to runWorker / runCoordinator. `blockx up` joins its Coordinator and N Workers behind
// the one endpoint, each service's samples told apart by its default labels {service, deployment,
// instance} (kernel/observability/metrics-server.ts). The endpoint is HTTPS with client certificates
// when `tls` is on (docs/security.md § TLS and authentication); its close is registered on the stack.
import type { Registry } from 'prom-client';
import type { BlockxConfig } from '../kernel/config-types.js';
import { startMetricsServer } from '../kernel/observability/metrics-server.js';
import { createServiceRegistry, type ServiceLabels } from '../kernel/observability/service-registry.js';
import { loadTlsMaterial } from '../kernel/tls-files.js';
import type { TeardownStack } from '../kernel/teardown-stack.js';

export interface ProcessMetrics {
  /** `host:port` of the endpoint, '' when metrics are off. */
  readonly address: string;
  /** A new Registry for one service, already served by the endpoint. */
  registryFor(labels: ServiceLabels): Registry;
  /** Serves a Registry made elsewhere too (`blockx up`: a Worker child's, read from it at each scrape). */
  serve(registry: Registry): void;
}

/**
 * The metrics of a process that serves no endpoint of its own: a Worker child of `blockx up`, whose
 * parent reads `registries` at each scrape (worker-child/).
 */
export function metricsForParent(): ProcessMetrics & { readonly registries: readonly Registry[] } {
  const registries: Registry[] = [];
  return { address: '', registries, ...servedBy(registries) };
}

function servedBy(registries: Registry[]): Pick<ProcessMetrics, 'registryFor' | 'serve'> {
  return {
    registryFor(labels) {
      const registry = createServiceRegistry(labels);
      registries.push(registry);
      return registry;
    },
    serve: (registry) => void registries.push(registry),
  };
}

export async function startProcessMetrics(
  config: BlockxConfig,
  stack: TeardownStack,
  logger?: { info(obj: Record<string, unknown>, msg: string): void },
): Promise<ProcessMetrics> {
  // Read at every scrape: services added after the endpoint started show up.
  const registries: Registry[] = [];
  const server = stack.adopt(
    'metrics server',
    await startMetricsServer({
      ...config.observability.prometheus,
      registry: registries,
      tls: loadTlsMaterial(config.tls),
      allowPlaintext: config.tls.allowPlaintext,
    }),
  );
  if (server.address !== '') logger?.info({ address: server.address }, 'serving Prometheus metrics');
  return { address: server.address, ...servedBy(registries) };
}
