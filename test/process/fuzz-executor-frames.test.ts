// Hostile frames on the executor socket (src/executor/PROTOCOL.md, docs/security.md "The executor
// socket"), against real processes, both ways round:
//
//   1. The Executor (`blockx executor --socket PATH --secret-fd 3`, the built CLI) gets random and
//      malformed frames from what it takes for its Worker (this test listens on the socket): bad length
//      prefixes, oversized lengths, invalid JSON, valid JSON of the wrong shape, unknown message types,
//      deep nesting, split anywhere; sent before and after its Hello has arrived. Property: it never
//      crashes (a stop is exit 0 with the reason logged) and never hangs: within a bound it has either
//      closed the connection and exited, or it still answers a valid ExecuteCall. Either way a fresh
//      Executor then authenticates with its spawn secret and runs a call.
//   2. The Worker's end (ExecutorLink behind an ExecutorSupervisor with a real Executor) gets the same
//      kinds of frames from impostor connections before any Hello. Property: each is closed unanswered
//      within the Hello bound, the real Executor is never displaced or declared lost and still runs a
//      call, and the refusal warnings are rate-limited.
import { DEFAULT_MAX_FRAME_BYTES as MAX_FRAME_BYTES } from '../../src/executor/frame-codec.js';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FunctionCodeView } from '../../src/executor/code-epochs.js';
import { FrameDecoder, encodeJsonFrame } from '../../src/executor/frame-codec.js';
import { packagePath } from '../../src/kernel/package-root.js';
import { spawnTracked, stopGroup } from '../support/processes.js';
import { ExecutorHarness, FIXTURE_FUNCTIONS } from '../integration/executor/executor-harness.js';
import { SocketClient } from '../support/socket-client.js';
import { ensureBuilt } from './worker-health-harness.js';
import { eventually } from '../support/eventually.js';
import { fuzzRuns, fuzzTimeoutMs } from '../support/fuzz-budget.js';
import { makeFunctionsDir, removeDir } from '../support/worker-tasks.js';

const CLI = packagePath('bin', 'blockx.js');
const ANSWER_BOUND_MS = 5_000;
// Executor cases are costly when fatal (a clean exit, then a new process); impostor cases are cheap.
const EXECUTOR_RUNS = fuzzRuns({ budget: 16, ciCap: 12 });
const IMPOSTOR_RUNS = fuzzRuns({ budget: 40, ciCap: 20 });
/** A longer run by hand (`FUZZ_RUNS=200 npx vitest run --project process <file>`) gets the time it needs. */
const FUZZ_TIMEOUT_MS = fuzzTimeoutMs(55_000);

// ---- Frames ----------------------------------------------------------------------------------------

const header = (length: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(length >>> 0, 0);
  return b;
};
const frameOf = (text: string): Buffer => Buffer.concat([header(Buffer.byteLength(text)), Buffer.from(text)]);

const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const hostileString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', '\u0000', '\ud800', '__proto__', 'constructor', 'x'.repeat(10_000)),
);
const anyJson = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  hostileString,
  fc.constantFrom(-1, 0, 1e308, -0.5, 2 ** 53),
);
const TYPES = [
  'ExecuteCall',
  'CancelCall',
  'ResumeCall',
  'DefineEpoch',
  'RetireEpoch',
  'DropIoCache',
  'Hello',
  'Heartbeat',
  'CallCompleted',
] as const;
const FIELDS = [
  'taskId',
  'callId',
  'attempt',
  'function',
  'args',
  'codeEpoch',
  'budgetMs',
  'ioCache',
  'reason',
  'requestId',
  'ok',
  'value',
  'error',
  'epoch',
  'functionsDir',
  'files',
  'secret',
  'block',
] as const;

/** A JSON object whose `type` is a known frame (or not) and whose fields are of any type. */
const wrongShape = fc
  .record({
    type: fc.oneof(fc.constantFrom(...TYPES), hostileString, fc.constant(42)),
    fields: fc.dictionary(fc.constantFrom(...FIELDS), anyJson, { maxKeys: 8 }),
  })
  .map(({ type, fields }) => JSON.stringify({ ...fields, type }));
/** Frames the executor mostly handles: valid shapes with hostile values. */
const plausible = fc.oneof(
  fc
    .record({
      callId: fc.oneof(hostileString, fc.constant('c')),
      attempt: fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constant(1.5)),
      fn: fc.oneof(fc.constantFrom('hello_world', 'nope', '../x', ''), hostileString),
      epoch: fc.oneof(fc.constant('nope'), hostileString),
      // Deep arguments are built as text: a 50k-deep value would overflow this process's JSON.stringify.
      args: fc.oneof(
        fc.array(anyJson, { maxLength: 3 }).map((a) => JSON.stringify(a)),
        fc.integer({ min: 1, max: 50_000 }).map((d) => `[${deep(d)}]`),
      ),
      budgetMs: fc.oneof(fc.integer({ min: -5, max: 10_000 }), fc.constant(1e300)),
    })
    .map((c) =>
      JSON.stringify({
        type: 'ExecuteCall',
        taskId: 't',
        callId: c.callId,
        attempt: c.attempt,
        function: c.fn,
        args: '<args>',
        codeEpoch: c.epoch,
        budgetMs: c.budgetMs,
      }).replace('"<args>"', () => c.args),
    ),
  fc
    .record({
      callId: hostileString,
      attempt: anyJson,
      requestId: anyJson,
      ok: anyJson,
      value: anyJson,
      error: anyJson,
    })
    .map((r) => JSON.stringify({ type: 'ResumeCall', ...r })),
  fc
    .record({ callId: anyJson, attempt: anyJson, reason: anyJson })
    .map((r) => JSON.stringify({ type: 'CancelCall', ...r })),
  fc
    .record({
      epoch: hostileString,
      functionsDir: fc.oneof(fc.constantFrom('/', '/nonexistent', ''), hostileString),
      files: fc.oneof(
        anyJson,
        fc.array(
          fc.record({
            name: anyJson,
            fileName: anyJson,
            source: fc.oneof(anyJson, fc.constant('export default (')),
          }),
          {
            maxLength: 3,
          },
        ),
      ),
    })
    .map((r) => JSON.stringify({ type: 'DefineEpoch', ...r })),
  fc.record({ epoch: anyJson }).map((r) => JSON.stringify({ type: 'RetireEpoch', ...r })),
  fc.record({ ioCache: anyJson }).map((r) => JSON.stringify({ type: 'DropIoCache', ...r })),
);

type Piece = { readonly kind: string; readonly bytes: Buffer };
const piece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 5, arbitrary: plausible.map((t) => ({ kind: 'plausible', bytes: frameOf(t) })) },
  { weight: 3, arbitrary: wrongShape.map((t) => ({ kind: 'wrong shape', bytes: frameOf(t) })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        'not json',
        '{"type":',
        '"just a string"',
        '[1,2]',
        'null',
        '{}',
        '{"type":null}',
        '\uFEFF{}',
      )
      .map((t) => ({ kind: 'not a message', bytes: frameOf(t) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 100_000 })
      .map((d) => ({ kind: 'deep', bytes: frameOf(`{"type":"CancelCall","callId":${deep(d)}}`) })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(MAX_FRAME_BYTES + 1, 0xffffffff, 0x7fffffff)
      .map((n) => ({ kind: 'oversized length', bytes: header(n) })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty frame', bytes: header(0) }) },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => ({ kind: 'raw bytes', bytes: Buffer.from(a) })),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ minLength: 1, maxLength: 32 }).map((a) => ({
      kind: 'invalid UTF-8',
      bytes: Buffer.concat([header(a.length + 2), Buffer.from('{"'), Buffer.from(a)]),
    })),
  },
);

/**
 * What completes the last frame of `all` if it ends mid-frame (spaces for the missing payload). Without
 * it a partial frame would swallow the probe that follows, and a waiting executor is not a hung one.
 * Nothing when the stream already holds a frame over the size limit: the executor closes there.
 */
function completion(all: Buffer): Buffer {
  let off = 0;
  for (;;) {
    const rest = all.length - off;
    if (rest === 0) return Buffer.alloc(0);
    if (rest < 4) {
      const zeros = Buffer.alloc(4 - rest);
      const length = Buffer.concat([all.subarray(off), zeros]).readUInt32BE(0);
      return length > MAX_FRAME_BYTES ? zeros : Buffer.concat([zeros, Buffer.alloc(length, 0x20)]);
    }
    const length = all.readUInt32BE(off);
    if (length > MAX_FRAME_BYTES) return Buffer.alloc(0);
    if (rest - 4 < length) return Buffer.alloc(length - (rest - 4), 0x20);
    off += 4 + length;
  }
}

/** A case: pieces, concatenated and re-cut at the given points (frames split or coalesced anywhere). */
function caseOf(pieces: readonly Piece[], cuts: readonly number[], beforeHello: boolean) {
  const all = Buffer.concat(pieces.map((p) => p.bytes));
  const at = [...new Set(cuts.map((c) => (all.length === 0 ? 0 : c % all.length)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let last = 0;
  for (const c of at) {
    chunks.push(all.subarray(last, c));
    last = c;
  }
  chunks.push(all.subarray(last), completion(all));
  return {
    chunks: chunks.filter((c) => c.length > 0),
    beforeHello,
    kinds: pieces.map((p) => p.kind),
    [fc.toStringMethod]: () =>
      `${beforeHello ? 'before' : 'after'} Hello: ${pieces.map((p) => `${p.kind} ${p.bytes.subarray(0, 120).toString('latin1')}`).join(' | ')}`,
  };
}
type FuzzCase = ReturnType<typeof caseOf>;

const fuzzCase: fc.Arbitrary<FuzzCase> = fc
  .record({
    pieces: fc.array(piece, { minLength: 1, maxLength: 6 }),
    cuts: fc.array(fc.nat(), { maxLength: 4 }),
    beforeHello: fc.integer({ min: 0, max: 3 }).map((n) => n === 0), // each costs a new executor
  })
  .map(({ pieces, cuts, beforeHello }) => caseOf(pieces, cuts, beforeHello));

/**
 * Two cases run ahead of the random ones, so that the check that both outcomes occurred holds whatever
 * the seed (12 random cases can all end in a closed connection): a call for a function the epoch does
 * not hold, cut in two, is answered with a CallFailed and the connection stays; a length over the frame
 * limit closes it.
 */
const FIXED_CASES: readonly FuzzCase[] = [
  caseOf(
    [
      {
        kind: 'plausible',
        bytes: frameOf(
          JSON.stringify({
            type: 'ExecuteCall',
            taskId: 't',
            callId: 'fixed-unknown-function',
            attempt: 1,
            function: 'nope',
            args: [],
            codeEpoch: 'nope',
            budgetMs: 1_000,
          }),
        ),
      },
    ],
    [7],
    false,
  ),
  caseOf([{ kind: 'oversized length', bytes: header(MAX_FRAME_BYTES + 1) }], [], false),
];

// ---- 1. The Executor as the target ----------------------------------------------------------------

/** One executor process and its (only) connection to this test's socket. */
interface Spawned {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly conn: Promise<Conn>;
}
interface Conn {
  readonly socket: Socket;
  readonly frames: Record<string, unknown>[];
  readonly closed: Promise<void>;
  /** Resolves with the first frame matching `pred` (already received or later); rejects at `ms`. */
  waitFor(
    pred: (f: Record<string, unknown>) => boolean,
    ms: number,
  ): Promise<Record<string, unknown> | undefined>;
}

describe('the executor process, fed hostile frames by its "worker"', () => {
  let dir: string;
  let functionsDir: string;
  let socketPath: string;
  let server: Server;
  let epoch: string;
  const pending: ((socket: Socket) => void)[] = [];
  const spawned: ChildProcess[] = [];
  let probeSeq = 0;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'bx-fuzzx-'));
    functionsDir = makeFunctionsDir({});
    epoch = await new FunctionCodeView({ dir: functionsDir }).pinCurrent();
    socketPath = join(dir, 'executor.sock');
    server = createServer((socket) => {
      const take = pending.shift();
      if (take) take(socket);
      else socket.destroy(); // nobody expected this connection
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });

  afterAll(async () => {
    await Promise.all(spawned.map((c) => stopGroup(c, 'SIGKILL', 1_000)));
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (functionsDir) removeDir(functionsDir);
  });

  function spawnExecutor(secret: string): Spawned {
    const conn = new Promise<Conn>((resolve) => pending.push((socket) => resolve(wrap(socket))));
    const child = spawnTracked(
      process.execPath,
      [
        CLI,
        'executor',
        '--socket',
        socketPath,
        '--functions-dir',
        functionsDir,
        '--secret-fd',
        '3',
        '--threads',
        '1',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
    );
    spawned.push(child);
    (child.stdio[3] as Writable).end(secret);
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-8_000)));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, stderr: () => stderr, exited, conn };
  }

  function wrap(socket: Socket): Conn {
    const frames: Record<string, unknown>[] = [];
    const decoder = new FrameDecoder<Record<string, unknown>>();
    let listeners: (() => void)[] = [];
    socket.on('data', (chunk: Buffer) => {
      frames.push(...decoder.push(chunk));
      listeners.forEach((l) => l());
    });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    return {
      socket,
      frames,
      closed,
      waitFor: (pred, ms) =>
        new Promise((resolve) => {
          const check = () => {
            const hit = frames.find(pred);
            if (hit !== undefined) {
              clearTimeout(timer);
              listeners = listeners.filter((l) => l !== check);
              resolve(hit);
            }
          };
          const timer = setTimeout(() => {
            listeners = listeners.filter((l) => l !== check);
            resolve(undefined);
          }, ms);
          listeners.push(check);
          check();
        }),
    };
  }

  /** Sends a valid ExecuteCall of hello_world; the terminal frame answering it, if one comes in time. */
  async function probe(conn: Conn): Promise<Record<string, unknown> | undefined> {
    const callId = `probe-${probeSeq++}`;
    const call = {
      type: 'ExecuteCall',
      taskId: 'probe',
      callId,
      attempt: 1,
      function: 'hello_world',
      args: ['fuzz'],
      codeEpoch: epoch,
      budgetMs: 5_000,
    };
    if (conn.socket.destroyed) return undefined;
    conn.socket.write(encodeJsonFrame(JSON.stringify(call)));
    return conn.waitFor(
      (f) => (f['type'] === 'CallCompleted' || f['type'] === 'CallFailed') && f['callId'] === callId,
      ANSWER_BOUND_MS,
    );
  }

  /**
   * Whether `chunks` end inside a frame whose declared length (attachment flag aside) is within the
   * limit and which needs more bytes than the probe's frame (under 4 KiB) can give: then no frame error
   * can come, only more bytes.
   */
  function endsMidFrame(chunks: readonly Uint8Array[]): boolean {
    const bytes = Buffer.concat(chunks.map((c) => Buffer.from(c)));
    let offset = 0;
    while (offset + 4 <= bytes.length) {
      const size = bytes.readUInt32BE(offset) & 0x7fff_ffff;
      if (size > MAX_FRAME_BYTES) return false;
      if (offset + 4 + size > bytes.length) return offset + 4 + size - bytes.length > 4096;
      offset += 4 + size;
    }
    return false;
  }

  const secretOf = (n: number): string => `${n.toString(16).padStart(8, '0')}${'ab'.repeat(28)}`;

  /** A fresh executor that authenticates with its secret and is ready (first Heartbeat). */
  async function fresh(n: number): Promise<{ ex: Spawned; conn: Conn }> {
    const ex = spawnExecutor(secretOf(n));
    const conn = await ex.conn;
    const hello = await conn.waitFor((f) => f['type'] === 'Hello', ANSWER_BOUND_MS);
    expect(hello, ex.stderr()).toMatchObject({ type: 'Hello', secret: secretOf(n), pid: ex.child.pid });
    return { ex, conn };
  }

  it(
    `never crashes or hangs on ${EXECUTOR_RUNS} cases of malformed frames; a fresh executor still works`,
    async () => {
      let n = 0;
      let current: { ex: Spawned; conn: Conn } | undefined;
      const outcomes = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(fuzzCase, async (c) => {
          let ex: Spawned;
          let conn: Conn;
          if (c.beforeHello || current === undefined) {
            // Frames from the moment of connection, before the executor's Hello has been read.
            if (current) await stopGroup(current.ex.child, 'SIGKILL', 1_000);
            ex = spawnExecutor(secretOf(++n));
            conn = await ex.conn;
            for (const chunk of c.chunks) conn.socket.write(chunk);
            current = { ex, conn };
          } else {
            ({ ex, conn } = current);
            await conn.waitFor((f) => f['type'] === 'Heartbeat', ANSWER_BOUND_MS);
            for (const chunk of c.chunks) conn.socket.write(chunk);
          }
          // An answer to a valid call, or the connection closed (then no answer can come).
          const answer = await Promise.race([probe(conn), conn.closed.then(() => undefined)]);
          if (answer !== undefined) {
            outcomes.set('answered', (outcomes.get('answered') ?? 0) + 1);
            return;
          }
          // The case's bytes declared a frame within the size limit whose bytes never all came (the probe
          // became part of it): the executor rightly waits for the rest, as for a slow Worker. The Worker's
          // side closing the connection must then end it cleanly, like any other.
          if (endsMidFrame(c.chunks) && !conn.socket.destroyed) {
            conn.socket.end();
            outcomes.set(
              'waited for a declared frame',
              (outcomes.get('waited for a declared frame') ?? 0) + 1,
            );
          }
          // No answer: the executor must have closed the connection and exited cleanly, promptly.
          const exit = await Promise.race([
            ex.exited,
            new Promise<undefined>((r) => setTimeout(() => r(undefined), ANSWER_BOUND_MS)),
          ]);
          expect(
            exit,
            `neither an answer nor an exit within ${ANSWER_BOUND_MS} ms: ${ex.stderr()}`,
          ).toBeDefined();
          expect(exit, ex.stderr()).toEqual({ code: 0, signal: null });
          expect(ex.stderr()).toMatch(/protocol error|connection closed|shutdown/);
          // A clean stop, not a crash: no uncaught exception, no stack trace, no Node.js crash footer.
          expect(ex.stderr()).not.toMatch(/Uncaught|Node\.js v\d|\n\s+at /);
          await conn.closed;
          outcomes.set('closed', (outcomes.get('closed') ?? 0) + 1);
          current = undefined;
          // A fresh executor still authenticates and runs a call.
          const next = await fresh(++n);
          expect(await probe(next.conn), next.ex.stderr()).toMatchObject({
            type: 'CallCompleted',
            value: 'hello, fuzz',
          });
          current = next;
        }),
        {
          numRuns: EXECUTOR_RUNS,
          endOnFailure: true,
          examples: FIXED_CASES.map((c) => [c]),
          // FC_SEED=<the seed a failure printed> replays that run.
          ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
        },
      );
      // Both outcomes occurred: the cases were neither all harmless nor all fatal.
      expect(outcomes.get('answered') ?? 0, JSON.stringify([...outcomes])).toBeGreaterThan(0);
      expect(outcomes.get('closed') ?? 0, JSON.stringify([...outcomes])).toBeGreaterThan(0);
      if (current) {
        expect(await probe(current.conn)).toMatchObject({ type: 'CallCompleted' });
        await stopGroup(current.ex.child, 'SIGKILL', 1_000);
      }
    },
    FUZZ_TIMEOUT_MS,
  );
});

// ---- 2. The Worker's end of the socket as the target ------------------------------------------------

describe("the worker's executor socket, fed the same frames by impostors before any Hello", () => {
  let h: ExecutorHarness;
  const warnings: string[] = [];
  let firstWarningAt = 0;

  beforeAll(async () => {
    h = new ExecutorHarness({
      functionsDir: FIXTURE_FUNCTIONS,
      helloTimeoutMs: 300,
      log: (level, message) => {
        if (level !== 'warn') return;
        if (warnings.length === 0) firstWarningAt = Date.now();
        warnings.push(message);
      },
    });
    await h.start();
  }, 30_000);
  afterAll(async () => {
    await h?.stop();
  });

  it(
    'closes every impostor unanswered; the executor stays and still runs calls; warnings are rate-limited',
    async () => {
      const pid = h.supervisor.pid;
      const epoch = await new FunctionCodeView({ dir: FIXTURE_FUNCTIONS }).pinCurrent();
      const helloLike = fc
        .record({
          secret: fc.oneof(
            anyJson,
            fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 }),
          ),
          extra: fc.dictionary(fc.constantFrom(...FIELDS), anyJson),
        })
        .map(({ secret, extra }) => ({
          kind: 'Hello',
          bytes: frameOf(JSON.stringify({ ...extra, type: 'Hello', protocolVersion: 1, secret })),
        }));
      const impostor = fc.array(
        fc.oneof(
          piece,
          helloLike,
          fc.constant({
            kind: 'first frame > 64 KiB',
            bytes: frameOf(`{"type":"Hello","pad":"${'p'.repeat(70_000)}"}`),
          }),
        ),
        {
          minLength: 0,
          maxLength: 4,
        },
      );
      let refused = 0;
      const started = Date.now();
      await fc.assert(
        fc.asyncProperty(impostor, async (pieces) => {
          const client = await SocketClient.connect(h.link.socketPath);
          for (const p of pieces) client.socket.write(p.bytes);
          const closed = await Promise.race([
            client.closed.then(() => true),
            new Promise<false>((r) => setTimeout(() => r(false), 2_000)),
          ]);
          expect(closed, `not closed within 2 s: ${pieces.map((p) => p.kind).join(', ')}`).toBe(true);
          expect(client.receivedBytes).toBe(0);
          refused++;
        }),
        { numRuns: IMPOSTOR_RUNS, endOnFailure: true },
      );
      // Nothing displaced the executor; it still runs a call.
      const done = await h.run({ function: 'echo', codeEpoch: epoch, args: ['still here'] });
      expect(done, JSON.stringify(h.logs.slice(-5))).toMatchObject({ type: 'callCompleted' });
      expect(h.supervisor.pid).toBe(pid);
      expect(h.supervisor.starts).toBe(1);
      expect(h.count('executorLost')).toBe(0);
      // At most the burst (10) plus one line per 10 s of refusals were logged, and the next logged
      // refusal says how many were suppressed.
      const lines = warnings.filter((w) => w.startsWith('refused a connection to the executor socket'));
      expect(refused).toBeGreaterThan(10);
      const summary = `${lines.length} lines for ${refused} refusals`;
      expect(lines.length, summary).toBeLessThanOrEqual(10 + Math.ceil((Date.now() - started) / 10_000));
      expect(lines.length, summary).toBeGreaterThan(0);
      // One interval after the first refusal the limit lets one line through, counting the rest.
      await eventually(() => Date.now() - firstWarningAt > 10_050, {
        timeoutMs: 11_000,
        message: 'one rate-limit interval',
      });
      const late = await SocketClient.connect(h.link.socketPath);
      late.socket.write(frameOf('{"type":"Hello","secret":"wrong"}'));
      await late.closed;
      expect(warnings.at(-1)).toMatch(/\(\d+ similar lines? suppressed before this one\)$/);
    },
    FUZZ_TIMEOUT_MS,
  );
});
