// A real Ethereum node for tests: Anvil from the pinned `@foundry-rs/anvil` dev dependency (its Linux binary
// ships inside the optional `@foundry-rs/anvil-linux-amd64`, so `npm ci` needs no download). Each node gets a
// free loopback port and runs `--silent`; it is ready in well under a second (chain id 31337). `stop()` kills
// it; every node is also killed when the test worker exits (processes.ts).
//
// The contracts are hand-assembled bytecode, committed here, so tests need no compiler (solc-js would add
// seconds per file and a 10 MB dependency for two contracts of a few dozen bytes):
// - TOKEN emits an ERC-20 `Transfer(caller, to, amount)` for calldata `to (32 bytes) ‖ amount (32 bytes)`;
// - FORWARDER (its target address baked in at deploy time) copies its calldata into one CALL to the target,
//   so a call through it leaves a nested call frame (a trace with trace address [0]) and a log whose
//   emitter is the token, not the called contract.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import { captureOutput, isRunning, spawnTracked, stopGroup } from './processes.js';
import type { OutputTail } from './processes.js';
import type { RpcLimits } from '../../src/services/chain-rpc/adapters/rpc-client.js';

/** keccak256("Transfer(address,address,uint256)"), the ERC-20 Transfer event's topics[0]. */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
export const ANVIL_CHAIN_ID = 31337;

/** Request limits of a client of the local node: quick retries, no rate limit (a test that wants one sets it). */
export const ANVIL_LIMITS: RpcLimits = Object.freeze({
  maxConcurrentRequests: 4,
  requestsPerSecond: 0,
  requestBurst: 1,
  requestTimeoutMs: 5_000,
  maxAttempts: 3,
  initialBackoffMs: 10,
  maxBackoffMs: 50,
  maxRetryAfterMs: 5_000,
});

/**
 * A task template for `blockx backfill` over the Anvil chain's ingested events: erc20_transfers of each
 * block's Transfer logs into token_transfers (what the follow e2e tests keep current).
 */
export const ANVIL_TRANSFERS_TEMPLATE = Object.freeze({
  functionCallConfig: {
    type: 'BlockTableCallConfig',
    config: {
      function: 'erc20_transfers',
      table: 'events',
      chainId: ANVIL_CHAIN_ID,
      block: { number: 0 },
      where: { selector: TRANSFER_TOPIC },
    },
  },
  resultHandler: {
    type: 'BlockWriteResultHandler',
    config: { table: 'token_transfers', chainId: ANVIL_CHAIN_ID, block: { number: 0 } },
  },
  taskTimeoutMs: 30_000,
});

/** Runtime: MSTORE(0, calldata[32..64]); LOG3(0, 32, TRANSFER_TOPIC, CALLER, calldata[0..32]); STOP. */
const TOKEN_RUNTIME = `60203560005260003533 7f${TRANSFER_TOPIC.slice(2)} 60206000a300`.replace(/ /g, '');
/** Runtime: CALLDATACOPY(0, 0, CALLDATASIZE); CALL(GAS, target, 0, 0, CALLDATASIZE, 0, 0); POP; STOP. */
const forwarderRuntime = (target: string): string =>
  `366000600037 600060003660006000 73${strip(target).toLowerCase()} 5af15000`.replace(/ /g, '');

/** Init code that returns `runtime` as the deployed code: CODECOPY(0, 11, len); RETURN(0, len). */
export function initCodeFor(runtimeHex: string): string {
  const length = runtimeHex.length / 2;
  if (!Number.isInteger(length) || length > 0xff) throw new Error(`runtime of ${length} bytes: 1..255 only`);
  return `0x60${hexByte(length)}80600b6000396000f3${runtimeHex}`;
}

export interface StartAnvilOptions {
  /** How long to wait for the node to answer eth_chainId (default 15 s). */
  readonly readyTimeoutMs?: number;
  /** Extra command-line flags (e.g. `['--chain-id', '5']`, `['--block-time', '1']`). */
  readonly extraArgs?: readonly string[];
}

export interface AnvilNode {
  /** JSON-RPC URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  readonly port: number;
  /** The node's process id (what a bench reads its CPU time by). */
  readonly pid: number;
  /** One JSON-RPC call; throws with the node's error message on a JSON-RPC error. */
  rpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** The node's ten funded dev accounts. */
  accounts(): Promise<string[]>;
  /** SIGTERM (SIGKILL after 5 s). Idempotent. */
  stop(): Promise<void>;
  output(): string;
}

const PORT_ATTEMPTS = 5;

/** The Anvil binary inside node_modules (the platform package of `@foundry-rs/anvil`). */
export function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@foundry-rs/anvil-linux-amd64/package.json');
  return join(dirname(pkg), 'bin', 'anvil');
}

export async function startAnvil(opts: StartAnvilOptions = {}): Promise<AnvilNode> {
  const binary = anvilBinary();
  const readyTimeoutMs = opts.readyTimeoutMs ?? 15_000;
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawnTracked(binary, [
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--silent',
      ...(opts.extraArgs ?? []),
    ]);
    const tail = captureOutput(child);
    const url = `http://127.0.0.1:${port}`;
    let ready = await waitReady(child, url, readyTimeoutMs);
    // The port was free when picked, but another test's node may have bound it first: then ours exits
    // with "address already in use" while the other answers eth_chainId, and the test would drive a
    // node that is not its own (seen as "no receipt … is automine off?" in a full run). Ours is the one
    // that answered only if it is still running a moment later.
    if (ready === 'ready') {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (!isRunning(child) || /address already in use/i.test(tail.text()))
        ready = 'port taken by another node';
    }
    if (ready === 'ready') return node(child, tail, url, port);
    await stopGroup(child, 'SIGKILL', 1_000);
    if (!/address already in use/i.test(tail.text()) || attempt >= PORT_ATTEMPTS) {
      throw new Error(`anvil did not start on port ${port} (${ready}): ${tail.text().slice(-2_000)}`);
    }
  }
}

function node(child: ChildProcess, tail: OutputTail, url: string, port: number): AnvilNode {
  let stopped = false;
  const rpc = <T>(method: string, params: readonly unknown[] = []) => jsonRpc<T>(url, method, params);
  return {
    url,
    port,
    pid: child.pid as number,
    rpc,
    accounts: () => rpc<string[]>('eth_accounts'),
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopGroup(child, 'SIGTERM', 5_000);
    },
    output: () => tail.text(),
  };
}

async function waitReady(child: ChildProcess, url: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(child)) return 'exited';
    try {
      await jsonRpc(url, 'eth_chainId', []);
      return 'ready';
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
  return 'timeout';
}

let nextId = 1;

/** A plain JSON-RPC call over fetch (the tests' own client, independent of the code under test). */
export async function jsonRpc<T = unknown>(
  url: string,
  method: string,
  params: readonly unknown[],
): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message} (${body.error.code})`);
  return body.result as T;
}

// ---- Contracts and transactions ----------------------------------------------------------------------

interface Receipt {
  readonly status: string;
  readonly contractAddress: string | null;
  readonly blockNumber: string;
}

/** Send a transaction from a dev account (Anvil signs it) and wait for its receipt (automine: at once). */
export async function sendTransaction(
  anvil: AnvilNode,
  tx: { from: string; to?: string; data?: string; value?: bigint },
): Promise<{ hash: string; receipt: Receipt }> {
  const request: Record<string, string> = { from: tx.from };
  if (tx.to !== undefined) request['to'] = tx.to;
  if (tx.data !== undefined) request['data'] = tx.data;
  if (tx.value !== undefined) request['value'] = `0x${tx.value.toString(16)}`;
  const hash = await anvil.rpc<string>('eth_sendTransaction', [request]);
  // Automine mines the transaction right after it is accepted, but on its own task: on a loaded machine
  // the first receipt query can come before the block (a full CI run saw it). Ask again for up to 10 s.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const receipt = await anvil.rpc<Receipt | null>('eth_getTransactionReceipt', [hash]);
    if (receipt !== null) return { hash, receipt };
    if (Date.now() > deadline)
      throw new Error(`no receipt for ${hash} within 10 s (is automine off? mine first)`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function deploy(anvil: AnvilNode, from: string, runtimeHex: string): Promise<string> {
  const { receipt } = await sendTransaction(anvil, { from, data: initCodeFor(runtimeHex) });
  if (receipt.contractAddress === null || receipt.status !== '0x1') throw new Error('deployment failed');
  return receipt.contractAddress;
}

/** Deploy the Transfer-emitting token; returns its address. */
export const deployToken = (anvil: AnvilNode, from: string) => deploy(anvil, from, TOKEN_RUNTIME);

/** Deploy a forwarder whose every call is passed on to `target`; returns its address. */
export const deployForwarder = (anvil: AnvilNode, from: string, target: string) =>
  deploy(anvil, from, forwarderRuntime(target));

/** Calldata of the token's transfer: `to ‖ amount`, each a 32-byte word. */
export function transferCalldata(to: string, amount: bigint): string {
  return `0x${strip(to).toLowerCase().padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;
}

export interface ChainPlan {
  /** Blocks to mine. */
  readonly blocks: number;
  /** Token transfers per block (each its own transaction). Default 2. */
  readonly transfersPerBlock?: number;
  /** Also one transfer through the forwarder per block (a nested call frame). Default true. */
  readonly forwardedCall?: boolean;
  /** Also one plain ETH transfer per block. Default true. */
  readonly ethTransfer?: boolean;
}

export interface PopulatedChain {
  readonly token: string;
  readonly forwarder: string;
  /** The heights that hold the plan's blocks (after the two deployment blocks). */
  readonly from: number;
  readonly to: number;
}

/**
 * Deploy the token and a forwarder, then mine `plan.blocks` blocks, each holding its transfers (automine
 * is switched off while a block fills, so one block holds several transactions; it is on again after).
 */
export async function populateChain(anvil: AnvilNode, plan: ChainPlan): Promise<PopulatedChain> {
  const accounts = await anvil.accounts();
  const [deployer, ...others] = accounts as [string, ...string[]];
  const token = await deployToken(anvil, deployer);
  const forwarder = await deployForwarder(anvil, deployer, token);
  const from = Number(BigInt(await anvil.rpc<string>('eth_blockNumber'))) + 1;
  const transfers = plan.transfersPerBlock ?? 2;
  await anvil.rpc('evm_setAutomine', [false]);
  try {
    for (let b = 0; b < plan.blocks; b++) {
      const sends: Record<string, string>[] = [];
      for (let t = 0; t < transfers; t++) {
        const sender = others[(b + t) % others.length] as string;
        const to = others[(b + t + 1) % others.length] as string;
        const data = transferCalldata(to, BigInt(b * 1_000 + t + 1));
        sends.push({ from: sender, to: token, data });
      }
      if (plan.forwardedCall ?? true) {
        const data = transferCalldata(deployer, 2n ** 60n + BigInt(b));
        sends.push({ from: deployer, to: forwarder, data, gas: '0x30000' });
      }
      if (plan.ethTransfer ?? true) {
        const value = `0x${(10n ** 15n + BigInt(b)).toString(16)}`;
        sends.push({ from: deployer, to: others[0] as string, value });
      }
      // One at a time: sends from one account take their nonces in order.
      for (const tx of sends) await anvil.rpc('eth_sendTransaction', [tx]);
      await anvil.rpc('evm_mine', []);
    }
  } finally {
    await anvil.rpc('evm_setAutomine', [true]);
  }
  return { token, forwarder, from, to: from + plan.blocks - 1 };
}

const strip = (hex: string) => (hex.startsWith('0x') ? hex.slice(2) : hex);
const hexByte = (n: number) => n.toString(16).padStart(2, '0');
