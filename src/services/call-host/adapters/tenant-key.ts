// The tenant a task's calls run as in an executor (ExecuteCalls.tenant; docs/security.md § Task
// isolation): an opaque key of the submitter identity, so the executor never learns the name itself.
// Tasks without a known submitter share one key.

import { createHash } from 'node:crypto';
import { ANONYMOUS_CLIENT } from '../../../kernel/client-identity.js';

/** Keys already made: a Worker serves few identities, and a one-call task should not pay a SHA-256. */
const known = new Map<string, string>();
/** More distinct identities than this start the cache over (it only saves work). */
const KNOWN_MAX = 1024;

/** A short hash of `client` (ANONYMOUS_CLIENT when absent): equal identities, equal keys. */
export function tenantKey(client: string | undefined): string {
  const identity = client ?? ANONYMOUS_CLIENT;
  let key = known.get(identity);
  if (key === undefined) {
    key = createHash('sha256').update(identity).digest('base64url').slice(0, 22);
    if (known.size >= KNOWN_MAX) known.clear();
    known.set(identity, key);
  }
  return key;
}
