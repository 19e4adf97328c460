// Child process of killed-group-commit.test.ts (not a test file), one "worker": opens the storage named
// by URL with the repo's config and replaces the token_transfers rows of blocks FROM, FROM+STEP, … as
// the block writer does (deleteWhere of the block, insertRows of ROWS rows, one transaction per block),
// IN_FLIGHT of them at once, so they queue and share group commits (src/services/storage/
// sqlite-group-commit.ts, pg-group-commit.ts). It prints `done <block>` once a block's transaction
// resolved (committed) and goes on until the parent SIGKILLs it.
//   node --import tsx test/e2e/io/killed-group-child.ts URL FROM STEP ROWS IN_FLIGHT
import { openChildStorage } from './child-storage.js';
import { blockRows } from './killed-group-rows.js';

const [url, fromArg, stepArg, rowsArg, inFlightArg] = process.argv.slice(2);
if (url === undefined) throw new Error('usage: killed-group-child.ts URL FROM STEP ROWS IN_FLIGHT');
const step = Number(stepArg ?? 1);
const rows = Number(rowsArg ?? 40);
const inFlight = Number(inFlightArg ?? 64);
const backend = await openChildStorage(url);
await backend.migrate();

let next = Number(fromArg ?? 1);
async function lane(): Promise<never> {
  for (;;) {
    const block = next;
    next += step;
    await backend.transaction(async (tx) => {
      await tx.deleteWhere('token_transfers', { chain_id: 1, block_number: block });
      await tx.insertRows('token_transfers', blockRows(block, rows));
    });
    process.stdout.write(`done ${block}\n`);
  }
}
await Promise.all(Array.from({ length: inFlight }, () => lane()));
