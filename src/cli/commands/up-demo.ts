// The demo of `blockx up`: two tasks through the Coordinator (reserve → submit → watch), each printed
// with its result.
//
//   1. hello_world over CallListCallConfig → ReturnValueResultHandler (the README's example task);
//   2. erc20_transfers over BlockTableCallConfig (the ERC-20 Transfer events of one block of the demo
//      chain) → BlockWriteResultHandler into token_transfers, then checked against the rows a direct
//      decode of the same events gives.
//
// The demo chain (DEMO_BLOCKS heights of chain DEMO_CHAIN, seed 1) is generated into the configured
// storage when it is not there yet, so a fresh clone has data to run over.

import type { BlockxConfig } from '../../kernel/config-types.js';
import type { TaskInput } from '../../grpc/domain-types.js';
import type { StorageBackend } from '../../services/storage/types.js';
import type { CliIo } from '../io.js';
import { clientTlsOf } from './status.js';

export const DEMO_CHAIN = 1;
export const DEMO_BLOCKS = 20;
/** The block the BlockTable → BlockWrite demo task runs over. */
export const DEMO_BLOCK = 1;

/** Generates the demo chain unless every one of its heights is present already. */
export async function ensureDemoChain(
  backend: StorageBackend,
  config: BlockxConfig,
  io: CliIo,
): Promise<void> {
  let present = 0;
  for await (const page of backend.scan('blocks', {
    where: { chain_id: DEMO_CHAIN, canonical: true },
    blockRange: { from: 1, to: DEMO_BLOCKS },
    columns: ['number'],
  }))
    present += page.length;
  if (present >= DEMO_BLOCKS) return;
  const { writeSyntheticChain } = await import('../../services/storage/block-data/index.js');
  const t = await writeSyntheticChain(backend, config.tables, {
    chainId: DEMO_CHAIN,
    fromBlock: 1,
    blocks: DEMO_BLOCKS,
    seed: 1,
    chunk: DEMO_BLOCKS,
  });
  io.stdout(
    `demo chain: generated ${t.blocks} blocks, ${t.transactions} transactions, ${t.events} events of chain ${DEMO_CHAIN} into ${backend.displayUrl}\n`,
  );
}

interface DemoTask {
  readonly title: string;
  readonly task: TaskInput;
  /** Checks the outcome beyond SUCCEEDED; returns what to print, or throws what went wrong. */
  readonly check: (pluginResult: unknown) => Promise<string>;
}

async function demoTasks(backend: StorageBackend, newTaskId: () => string): Promise<DemoTask[]> {
  const { ERC20_TRANSFER_SELECTOR, tokenTransfersOf } =
    await import('../../services/storage/block-data/index.js');
  return [
    {
      title: 'hello_world over CallListCallConfig → ReturnValueResultHandler',
      task: {
        taskId: newTaskId(),
        functionCallConfig: {
          type: 'CallListCallConfig',
          config: { function: 'hello_world', callList: [['ct2'], ['blockx']] },
        },
        resultHandler: { type: 'ReturnValueResultHandler', config: {} },
        taskTimeoutMs: 30_000,
      },
      check: async (result) => JSON.stringify(result),
    },
    {
      title: `erc20_transfers over BlockTableCallConfig (events of block ${DEMO_BLOCK}) → BlockWriteResultHandler (token_transfers)`,
      task: {
        taskId: newTaskId(),
        functionCallConfig: {
          type: 'BlockTableCallConfig',
          config: {
            function: 'erc20_transfers',
            table: 'events',
            chainId: DEMO_CHAIN,
            block: { number: DEMO_BLOCK },
            where: { selector: ERC20_TRANSFER_SELECTOR },
          },
        },
        resultHandler: {
          type: 'BlockWriteResultHandler',
          config: { table: 'token_transfers', chainId: DEMO_CHAIN, block: { number: DEMO_BLOCK } },
        },
        taskTimeoutMs: 30_000,
      },
      check: async (result) => {
        const canonical = await rows(backend, 'blocks', {
          where: { chain_id: DEMO_CHAIN, number: DEMO_BLOCK, canonical: true },
        });
        const hash = canonical[0]?.hash;
        const events = await rows(backend, 'events', {
          where: { chain_id: DEMO_CHAIN, block_number: DEMO_BLOCK, block_hash: hash },
        });
        const expected = tokenTransfersOf(events as never[]).length;
        const written = (
          await rows(backend, 'token_transfers', {
            where: { chain_id: DEMO_CHAIN, block_number: DEMO_BLOCK },
          })
        ).length;
        if (written !== expected)
          throw new Error(`token_transfers holds ${written} rows for the block, expected ${expected}`);
        return `${written} token_transfers rows for block ${DEMO_BLOCK} (as decoding its events directly gives); writer result ${JSON.stringify(result)}`;
      },
    },
  ];
}

async function rows(
  backend: StorageBackend,
  table: string,
  query: { where: Record<string, unknown> },
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const page of backend.scan(table, query)) out.push(...page);
  return out;
}

/** Runs the demo tasks through the Coordinator; true when all succeeded and checked out. */
export async function runDemo(
  coordinator: string,
  slotTtlMs: number,
  backend: StorageBackend,
  config: BlockxConfig,
  io: CliIo,
): Promise<boolean> {
  const { runTask, newTaskId } = await import('../../client/task-client.js');
  await ensureDemoChain(backend, config, io);
  let ok = true;
  for (const demo of await demoTasks(backend, newTaskId)) {
    io.stdout(`demo: ${demo.title} (task ${demo.task.taskId})\n`);
    const started = Date.now();
    const { update, workerAddr } = await runTask(demo.task, {
      coordinator,
      slotTtlMs,
      signal: AbortSignal.timeout(60_000),
      ...clientTlsOf(config),
    });
    const er = update.result?.executeResult;
    if (update.state !== 'SUCCEEDED') {
      io.stdout(
        `demo: ${update.state} on ${workerAddr}: ${er?.failureCode || update.error} (retryable=${er?.retryable}) ${er?.failureMessage ?? ''}\n`,
      );
      ok = false;
      continue;
    }
    try {
      const shown = await demo.check(er?.pluginResults[0]?.result);
      io.stdout(`demo: SUCCEEDED on ${workerAddr} in ${Date.now() - started} ms: ${shown}\n`);
    } catch (err) {
      io.stdout(`demo: SUCCEEDED on ${workerAddr} but the check failed: ${(err as Error).message}\n`);
      ok = false;
    }
  }
  return ok;
}
