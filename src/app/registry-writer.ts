// The etcd heartbeat destination of a Worker process (`blockx worker` with registry.etcd.endpoints set,
// `blockx up` over etcd): one leased session; runWorker's publisher puts under `worker.registryPrefix`
// every heartbeatIntervalMs and closes it on shutdown (docs/architecture.md § etcd keys).
import type { ServiceLogger } from '../kernel/observability/service-logger.js';
import type { BlockxConfig } from '../kernel/config-types.js';
import { etcdSecurityOf } from '../services/registry/etcd-client.js';
import { EtcdRegistryWriter } from '../services/registry/etcd-registry-writer.js';
import type { WorkerRegistryWriter } from '../services/registry/registry-port.js';

/** The etcd writer when `registry.etcd.endpoints` is set, else undefined (a standalone worker). */
export function etcdRegistryWriter(
  config: BlockxConfig,
  logger: ServiceLogger,
): WorkerRegistryWriter | undefined {
  const { endpoints, dialTimeoutMs, leaseTtlMs } = config.registry.etcd;
  if (endpoints.length === 0) return undefined;
  return new EtcdRegistryWriter({
    endpoints,
    unaryDeadlineMs: dialTimeoutMs,
    leaseTtlMs,
    logger,
    security: etcdSecurityOf(config.registry.etcd),
  });
}
