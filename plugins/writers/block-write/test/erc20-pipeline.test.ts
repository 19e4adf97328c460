// The demo task of examples/tasks/block-table-transfers.json, run in memory: BlockTableCallConfig builds
// one call per event of block 1, functions/erc20_transfers turns each into a token_transfers row (or
// null), and BlockWriteResultHandler replaces the block's rows.
import { argsValuesOf } from '../../../../src/contracts/call-args.js';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CallContext } from '../../../../src/function.js';
import { decodeErc20Transfer } from '../../../../src/services/storage/block-data/erc20.js';
import erc20Transfers from '../../../../functions/erc20_transfers.js';
import blockTableBuilder from '../../../builders/block-table/src/index.js';
import { addressTopic, blockRow, eventRow, TRANSFER_TOPIC } from '../../../../test/support/chain-fixture.js';
import { MemoryTaskIo } from '../../../../test/support/memory-task-io.js';
import { pluginConfigOf } from '../../../../test/support/plugin-config.js';
import { pluginTaskCtx } from '../../../../test/support/plugin-package.js';
import blockWriter from '../src/index.js';

const task = JSON.parse(
  readFileSync(new URL('../../../../examples/tasks/block-table-transfers.json', import.meta.url), 'utf8'),
) as {
  functionCallConfig: { type: string; config: never };
  resultHandler: { type: string; config: never };
};
const ctx = pluginTaskCtx;

/** `config` as the kernel hands it to the plugin at `dir`: validated, the schema's defaults filled in. */
async function resolvedFor(dir: string, config: unknown): Promise<never> {
  return (await pluginConfigOf<never>(new URL(dir, import.meta.url)))(config);
}
const builderConfig = await resolvedFor('../../../builders/block-table/', task.functionCallConfig.config);
const writerConfig = await resolvedFor('../', task.resultHandler.config);

const b1 = blockRow(1);
const b1b = blockRow(1, { fork: 'b' });
const alice = `0x${'a1'.repeat(20)}`;
const bob = `0x${'B0'.repeat(20)}`;
const events = [
  eventRow(b1, 0, {
    topics: [TRANSFER_TOPIC, addressTopic(alice), addressTopic(bob)],
    data: `0x${'f'.repeat(64)}`,
  }),
  // ERC-721 Transfer: same selector, token id as a fourth topic, empty data.
  eventRow(b1, 1, {
    topics: [TRANSFER_TOPIC, addressTopic(alice), addressTopic(bob), `0x${'0'.repeat(63)}7`],
    data: '0x',
  }),
  // Another event (Approval).
  eventRow(b1, 2, {
    selector: '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c8f7b2291e5b200ac8c7c3b925',
    topics: [
      '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c8f7b2291e5b200ac8c7c3b925',
      addressTopic(alice),
      addressTopic(bob),
    ],
  }),
  eventRow(b1, 3, { contract_id: `0x${'D'.repeat(40)}` }),
  // A transfer in the non-canonical sibling: never written.
  eventRow(b1b, 4),
];

async function runTask(io: MemoryTaskIo): Promise<unknown[]> {
  const { calls } = await blockTableBuilder.build(ctx('builder'), builderConfig, io);
  const outputs = await Promise.all(
    calls.map((c) => erc20Transfers({ block: c.block } as CallContext, argsValuesOf(c.args)[0] as never)),
  );
  await blockWriter.execute(ctx('plugin'), writerConfig, outputs, io);
  return outputs;
}

describe('examples/tasks/block-table-transfers.json in memory', () => {
  it('names the two plugins and the demo function', () => {
    expect(task.functionCallConfig.type).toBe('BlockTableCallConfig');
    expect(task.resultHandler.type).toBe('BlockWriteResultHandler');
  });

  it('writes one token_transfers row per ERC-20 Transfer of the canonical block 1', async () => {
    const io = MemoryTaskIo.fromConfigFile().seed('blocks', [b1, b1b]).seed('events', events);
    const outputs = await runTask(io);
    expect(outputs).toEqual([
      {
        chain_id: 1,
        block_number: 1,
        log_idx: 0,
        token: `0x${'c'.repeat(40)}`,
        from_address: alice,
        to_address: bob.toLowerCase(),
        amount: (2n ** 256n - 1n).toString(),
      },
      null, // the ERC-721 Transfer (the Approval event was filtered out by the task's `where`)
      {
        chain_id: 1,
        block_number: 1,
        log_idx: 3,
        token: `0x${'d'.repeat(40)}`,
        from_address: `0x${'a'.repeat(40)}`,
        to_address: `0x${'b'.repeat(40)}`,
        amount: '1003',
      },
    ]);
    expect(io.rows('token_transfers')).toEqual(outputs.filter((o) => o !== null));
    // A rerun leaves the same rows.
    const once = io.snapshot();
    await runTask(io);
    expect(io.snapshot()).toEqual(once);
  });

  it('agrees with the block-data decoder on every event', async () => {
    for (const event of events) {
      const decoded = decodeErc20Transfer(event);
      const row = await erc20Transfers({} as CallContext, event as never);
      expect(
        row === null
          ? undefined
          : { token: row.token, from: row.from_address, to: row.to_address, amount: row.amount },
      ).toEqual(decoded);
    }
  });
});
