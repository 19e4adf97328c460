// The Worker's logger: the services' logging port (ServiceLogger, src/kernel/observability/
// service-logger.ts) with its task ids bounded. Task lines carry `task_id`.

import { MAX_ID_BYTES, cutText } from '../../../../kernel/input-bounds.js';
import type { ServiceLogger } from '../../../../kernel/observability/service-logger.js';

/**
 * `logger` with every `task_id` field cut to MAX_ID_BYTES (docs/security.md § Input bounds). Accepted
 * ids already fit and are logged whole; a refused request may carry an id of any length, and logging it
 * verbatim let 600 requests with a 1 MiB id write 717 MB of log.
 */
export function withBoundedTaskIds(logger: ServiceLogger): ServiceLogger {
  const bound = (obj: Record<string, unknown>): Record<string, unknown> => {
    const id = obj['task_id'];
    if (typeof id !== 'string') return obj;
    const cut = cutText(id, MAX_ID_BYTES);
    return cut === id ? obj : { ...obj, task_id: cut };
  };
  return {
    debug: (obj, msg) => logger.debug(bound(obj), msg),
    info: (obj, msg) => logger.info(bound(obj), msg),
    warn: (obj, msg) => logger.warn(bound(obj), msg),
    error: (obj, msg) => logger.error(bound(obj), msg),
  };
}
