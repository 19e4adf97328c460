// The tenant a task's calls run as in an executor (ExecuteCalls.tenant; docs/security.md § Task
// isolation): an opaque key of the submitter identity, so the executor never learns the name itself.
// Tasks without a known submitter share one key.

import { createHash } from 'node:crypto';
import { ANONYMOUS_CLIENT } from '../../../kernel/client-identity.js';

/** A short hash of `client` (ANONYMOUS_CLIENT when absent): equal identities, equal keys. */
export function tenantKey(client: string | undefined): string {
  return createHash('sha256')
    .update(client ?? ANONYMOUS_CLIENT)
    .digest('base64url')
    .slice(0, 22);
}
