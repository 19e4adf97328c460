// Child process of killed-writer.test.ts (not a test file): opens the storage named by URL with the
// repo's config, starts one transaction that inserts ROWS token_transfers rows (chain 1, block BLOCK,
// log_idx 0..ROWS−1) through insertRows in chunks of CHUNK, then prints `inside <ROWS>` and waits
// inside the open transaction until the parent SIGKILLs it. It never commits.
//   node --import tsx test/e2e/io/killed-writer-child.ts URL BLOCK ROWS CHUNK
import { openChildStorage } from './child-storage.js';

const [url, blockArg, rowsArg, chunkArg] = process.argv.slice(2);
if (url === undefined) throw new Error('usage: killed-writer-child.ts URL BLOCK ROWS CHUNK');
const block = Number(blockArg ?? 777_000);
const rows = Number(rowsArg ?? 5_000);
const chunk = Number(chunkArg ?? 500);
const backend = await openChildStorage(url);

await backend.transaction(async (tx) => {
  for (let from = 0; from < rows; from += chunk) {
    const batch = [];
    for (let i = from; i < Math.min(rows, from + chunk); i++) {
      batch.push({
        chain_id: 1,
        block_number: block,
        log_idx: i,
        token: `0x${i.toString(16).padStart(40, '0')}`,
        from_address: `0x${'11'.repeat(20)}`,
        to_address: `0x${'22'.repeat(20)}`,
        amount: String(i),
      });
    }
    await tx.insertRows('token_transfers', batch);
  }
  process.stdout.write(`inside ${rows}\n`);
  // Hold the transaction open: the parent kills this process here.
  await new Promise(() => setInterval(() => undefined, 60_000));
});
process.stdout.write('committed (the parent should have killed this process first)\n');
