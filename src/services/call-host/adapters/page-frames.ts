// A page of calls as the executor link sends it (docs/executor.md § Pages): the calls' encoded argument
// texts spliced into one list without being parsed, and their blocks as runs of equal ones. Made once per
// page attempt (a page is rarely sent twice: a failed one is split, never retried).

import { encodedArgsList, type EncodedArgs } from '../../../contracts/call-args.js';
import type { CallBlock, CallPageInfo } from '../../../executor/protocol.js';
import type { CallPage } from '../core/dispatcher/index.js';

/** The page's arguments: the list of its calls' argument arrays, as encoded text. */
export function pageArgs(page: CallPage): EncodedArgs {
  // The dispatcher pages only calls with encoded arguments (core/dispatcher/pages.ts packPages).
  return encodedArgsList(page.args as readonly EncodedArgs[]);
}

/** The page entry's `page` field: its first call's position and its calls' blocks as runs. */
export function pageInfo(page: CallPage): CallPageInfo {
  const runs: [number, CallBlock | null][] = [];
  const blocks = page.blocks;
  let run: [number, CallBlock | null] | undefined;
  for (let i = 0; i < blocks.length; i++) {
    const b = (blocks[i] ?? null) as CallBlock | null;
    if (run !== undefined && sameBlock(run[1], b)) run[0] += 1;
    else runs.push((run = [1, b]));
  }
  return { first: page.first, blocks: runs };
}

/**
 * Whether two blocks are equal for a run: the same value, or plain objects whose own fields are the
 * same primitives (a builder that makes a fresh block object per call: block-bundle's). Anything deeper
 * counts as different, which only makes a run shorter.
 */
function sameBlock(a: CallBlock | null, b: CallBlock | null): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    const va = (a as Record<string, unknown>)[k];
    if (typeof va === 'object' && va !== null) return false;
    if (va !== (b as Record<string, unknown>)[k]) return false;
  }
  return true;
}
