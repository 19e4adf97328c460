// For the read-cache test: called once per event of a BlockTableCallConfig task, it reads one extra row
// of the `blocks` table through `ctx.io.get` — the call's own block (`which = 'self'`) or its parent
// (`'parent'`) — and returns what it read next to the event's log index. Every call of the task asks
// for the same row, so the task's read cache should hit storage once.
import type { CallContext } from '../../../../src/executor/sdk.js';

interface BlockRow {
  readonly chain_id: number;
  readonly number: number;
  readonly hash: string;
  readonly parent_hash: string;
}

export default async function blockReader(
  ctx: CallContext,
  event: { readonly idx: number },
  which: 'self' | 'parent',
): Promise<{ idx: number; number: number | null; hash: string | null }> {
  const block = ctx.block as unknown as BlockRow | undefined;
  if (block === undefined) throw new Error('block_reader needs a builder that sets ctx.block');
  const key =
    which === 'self'
      ? { chain_id: block.chain_id, number: block.number, hash: block.hash }
      : { chain_id: block.chain_id, number: block.number - 1, hash: block.parent_hash };
  const row = await ctx.io.get<BlockRow>('blocks', key);
  return { idx: event.idx, number: row?.number ?? null, hash: row?.hash ?? null };
}
