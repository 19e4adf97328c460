// Hostile input to a real `blockx worker` (the built CLI, with its Executor), over real gRPC
// (docs/security.md § Input bounds). fast-check generates RequestTaskSlot, RequestTaskSlots, SubmitTask,
// WatchTasks and RunTasks requests with huge, empty and binary ids, any int64 as ttl or timeout, configs
// that are deep, not UTF-8, not JSON or the wrong shape, unknown plugin types; and request bodies that are
// not the message at all (random bytes, valid protobuf framing with the wrong field types).
//
// The property, per call: the worker answers with a status before a client-side deadline (a hang is a
// failure: DEADLINE_EXCEEDED, as is UNAVAILABLE), that status is OK or a client error with a bounded
// message, never UNKNOWN and never INTERNAL. One INTERNAL is justified: a body protobuf cannot decode is
// refused by grpc-js itself ("Error deserializing request", before any BlockX code runs). After every
// call the worker still answers a health check; at the end it still runs a real task, never restarted its
// Executor, and no line it logged was longer than a bound (hostile ids are cut in logs).
import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_NAMES, packageDefinition } from '../../src/grpc/proto.js';
import { MAX_JSON_DEPTH, MAX_STATUS_MESSAGE_BYTES } from '../../src/kernel/input-bounds.js';
import { fuzzRuns, fuzzTimeoutMs } from '../support/fuzz-budget.js';
import { ensureBuilt, spawnWorker, type SpawnedWorker } from './worker-health-harness.js';

interface Method {
  readonly path: string;
  readonly requestSerialize: (value: unknown) => Buffer;
  readonly responseDeserialize: (bytes: Buffer) => unknown;
}
type MethodName =
  'RequestTaskSlot' | 'RequestTaskSlots' | 'SubmitTask' | 'WatchTasks' | 'RunTasks' | 'GetTaskResult';
const service = packageDefinition[SERVICE_NAMES.worker] as unknown as Record<MethodName, Method>;

const CALL_DEADLINE_MS = 10_000;
const MAX_LOG_LINE_BYTES = 64 * 1024;
const MiB = 1024 * 1024;
const RUNS = fuzzRuns({ budget: 120, ciCap: 60 });
/** A longer run by hand (`FUZZ_RUNS=1000 npx vitest run --project process <file>`) gets the time it needs. */
const FUZZ_TIMEOUT_MS = fuzzTimeoutMs(50_000);

interface Outcome {
  readonly code: grpc.status;
  readonly details: string;
  readonly responses: Buffer[];
}

const identity = (b: Buffer): Buffer => b;

let worker: SpawnedWorker | undefined;
let raw: grpc.Client;
const logLines: { bytes: number; head: string }[] = [];

beforeAll(async () => {
  ensureBuilt();
  worker = await spawnWorker({
    functions: {},
    env: { WORKER_TASK_SLOTS: '256', MAX_SLOT_TTL_MS: '5000', BLOCKX_LOG_LEVEL: 'info' },
  });
  if (worker.child.stderr !== null)
    createInterface({ input: worker.child.stderr }).on('line', (line) =>
      logLines.push({ bytes: Buffer.byteLength(line), head: line.slice(0, 200) }),
    );
  raw = new grpc.Client(worker.addr, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 * MiB,
    'grpc.max_send_message_length': 64 * MiB,
  });
}, 90_000);

afterAll(async () => {
  raw?.close();
  await worker?.stop();
});

const deadline = (): grpc.CallOptions => ({ deadline: Date.now() + CALL_DEADLINE_MS });

function unary(path: string, body: Buffer): Promise<Outcome> {
  return new Promise((resolve) => {
    raw.makeUnaryRequest(path, identity, identity, body, new grpc.Metadata(), deadline(), (err, res) =>
      resolve(
        err
          ? { code: err.code, details: err.details, responses: [] }
          : { code: grpc.status.OK, details: '', responses: res ? [res] : [] },
      ),
    );
  });
}

function serverStream(path: string, body: Buffer): Promise<Outcome> {
  return new Promise((resolve) => {
    const responses: Buffer[] = [];
    const call = raw.makeServerStreamRequest(path, identity, identity, body, new grpc.Metadata(), deadline());
    call.on('data', (b: Buffer) => responses.push(b));
    call.on('error', () => undefined); // the status event carries it
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details, responses }));
  });
}

function bidiStream(path: string, bodies: Buffer[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const responses: Buffer[] = [];
    const call = raw.makeBidiStreamRequest(path, identity, identity, new grpc.Metadata(), deadline());
    call.on('data', (b: Buffer) => responses.push(b));
    call.on('error', () => undefined);
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details, responses }));
    for (const b of bodies) call.write(b);
    call.end();
  });
}

function call(method: MethodName, bodies: Buffer[]): Promise<Outcome> {
  const path = service[method].path;
  if (method === 'WatchTasks') return serverStream(path, bodies[0] ?? Buffer.alloc(0));
  if (method === 'RunTasks') return bidiStream(path, bodies);
  return unary(path, bodies[0] ?? Buffer.alloc(0));
}

/** grpc.health.v1.Health/Check for the whole server: SERVING is the bytes 08 01. */
async function healthy(): Promise<Outcome> {
  return unary('/grpc.health.v1.Health/Check', Buffer.alloc(0));
}

// ---- Arbitraries ---------------------------------------------------------------------------------

const hugeString = fc.integer({ min: 257, max: MiB }).map((n) => 'i'.repeat(n));
const hostileString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\ud800',
      '\udfff\ud800',
      '../../etc/passwd',
      '%s%n',
      '${x}',
    ),
  },
  { weight: 1, arbitrary: hugeString },
);
const int64 = fc.oneof(
  fc.integer(),
  fc.constantFrom(0, -1, 1, 5_000, 5_001, 60_000, 2 ** 31, 2 ** 53 - 1, -(2 ** 53 - 1)),
  fc.constantFrom('9223372036854775807', '-9223372036854775808', '18446744073709551615'),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
);

function deepJson(depth: number, kind: 'array' | 'object' | 'mixed'): string {
  if (kind === 'array') return '['.repeat(depth) + ']'.repeat(depth);
  if (kind === 'object') return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 === 0 ? '[' : '{"k":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}0${close}`;
}
const deepConfig = fc
  .tuple(
    fc.integer({ min: MAX_JSON_DEPTH - 2, max: 200_000 }),
    fc.constantFrom('array', 'object', 'mixed') as fc.Arbitrary<'array' | 'object' | 'mixed'>,
  )
  .map(([d, k]) => Buffer.from(deepJson(d, k)));
const callListConfig = fc
  .record({
    function: fc.oneof(fc.constant('hello_world'), hostileString),
    callList: fc.oneof(
      fc.array(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 3 }), { maxLength: 3 }),
      fc.jsonValue(),
    ),
  })
  .map((c) => Buffer.from(JSON.stringify(c)));
const configBytes = fc.oneof(
  { weight: 3, arbitrary: callListConfig },
  { weight: 2, arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v))) },
  { weight: 2, arbitrary: deepConfig },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(Buffer.alloc(0), Buffer.from([0xff, 0xfe, 0x7b]), Buffer.from('{"a":')),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 2 * MiB })
      .map((n) => Buffer.from(JSON.stringify({ function: 'hello_world', callList: [['x'.repeat(n)]] }))),
  },
);
const pluginType = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'CallListCallConfig',
      'ReturnValueResultHandler',
      'BlockTableCallConfig',
      'BlockBundleCallConfig',
      'TableUpsertsResultHandler',
      'BlockWriteResultHandler',
      '',
    ),
  },
  { weight: 1, arbitrary: hostileString },
);
const pluginConfig = fc.record({ type: pluginType, config: configBytes });
const taskInput = fc.record(
  {
    taskId: hostileString,
    functionCallConfig: pluginConfig,
    resultHandler: pluginConfig,
    taskTimeoutMs: int64,
  },
  { requiredKeys: ['taskId'] },
);
const idList = fc.oneof(
  fc.array(hostileString, { maxLength: 20 }),
  fc.integer({ min: 1, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => `w${i % 5_000}`)),
);

/** A protobuf body with arbitrary fields: real field numbers with the wrong wire types, and others. */
function varint(n: bigint): number[] {
  const out: number[] = [];
  let v = BigInt.asUintN(64, n);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) byte |= 0x80;
    out.push(byte);
  } while (v > 0n);
  return out;
}
const pbField: fc.Arbitrary<number[]> = fc.oneof(
  fc
    .tuple(fc.integer({ min: 1, max: 8 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }))
    .map(([no, v]) => [...varint(BigInt(no << 3)), ...varint(v)]),
  fc
    .tuple(fc.integer({ min: 1, max: 8 }), fc.uint8Array({ maxLength: 40 }))
    .map(([no, b]) => [...varint(BigInt((no << 3) | 2)), ...varint(BigInt(b.length)), ...b]),
  fc
    .tuple(
      fc.integer({ min: 1, max: 8 }),
      fc.constantFrom(1, 5),
      fc.uint8Array({ minLength: 8, maxLength: 8 }),
    )
    .map(([no, wire, b]) => [...varint(BigInt((no << 3) | wire)), ...b.slice(0, wire === 1 ? 8 : 4)]),
  // A declared length past the end of the body, and a field number 0.
  fc.integer({ min: 1, max: 8 }).map((no) => [...varint(BigInt((no << 3) | 2)), ...varint(1n << 40n)]),
  fc.constant<number[]>([0x00]),
);
const garbageBody = fc.oneof(
  fc.array(pbField, { maxLength: 6 }).map((fs) => Buffer.from(fs.flat())),
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
);

type Request = {
  readonly method: MethodName;
  readonly bodies: Buffer[];
  readonly raw: boolean;
  readonly what: string;
  readonly [fc.toStringMethod]?: () => string;
};

/** Encodes with the proto's own serializer; a value it cannot encode (client-side) is not sent. */
function typed(method: MethodName, values: unknown[]): Request | undefined {
  try {
    const bodies = values.map((v) => service[method].requestSerialize(v));
    return printable({ method, bodies, raw: false, what: `${method} ${summarize(values)}` });
  } catch {
    return undefined;
  }
}

function summarize(v: unknown): string {
  const text = JSON.stringify(v, (_k, x: unknown) => {
    if (typeof x === 'string' && x.length > 80) return `<${x.length} chars>`;
    const buf = x as { type?: unknown; data?: unknown } | null;
    if (buf?.type === 'Buffer' && Array.isArray(buf.data))
      return `<${buf.data.length} bytes: ${Buffer.from(buf.data as number[])
        .toString('latin1')
        .slice(0, 60)}>`;
    return x;
  });
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** A request as fast-check prints a counterexample: its summary, not megabytes of buffers. */
function printable(req: Omit<Request, typeof fc.toStringMethod>): Request {
  return { ...req, [fc.toStringMethod]: () => req.what };
}

const slotRequest = fc
  .record({ taskId: hostileString, ttlMs: int64 })
  .map((r) => typed('RequestTaskSlot', [r]));
const slotsRequest = fc.record({ taskIds: idList, ttlMs: int64 }).map((r) => typed('RequestTaskSlots', [r]));
const submitRequest = fc
  .record({ task: fc.option(taskInput, { nil: undefined, freq: 10 }), slotId: hostileString })
  .map((r) => typed('SubmitTask', [r]));
const watchRequest = fc.record({ taskIds: idList }).map((r) => typed('WatchTasks', [r]));
const resultRequest = fc.record({ taskId: hostileString }).map((r) => typed('GetTaskResult', [r]));
const runTasksRequest = fc
  .array(
    fc.record({ tasks: fc.array(fc.record({ task: taskInput, slotId: hostileString }), { maxLength: 4 }) }),
    {
      minLength: 1,
      maxLength: 3,
    },
  )
  .map((msgs) => typed('RunTasks', msgs));
const rawRequest = fc
  .tuple(
    fc.constantFrom<MethodName>(
      'RequestTaskSlot',
      'RequestTaskSlots',
      'SubmitTask',
      'WatchTasks',
      'RunTasks',
    ),
    fc.array(garbageBody, { minLength: 1, maxLength: 2 }),
  )
  .map(([method, bodies]) =>
    printable({
      method,
      bodies,
      raw: true,
      what: `${method} raw ${bodies.map((b) => b.toString('hex').slice(0, 120)).join(' ')}`,
    }),
  );
// Configs are where most of the parsing is, so SubmitTask and RunTasks get most of the runs.
const request: fc.Arbitrary<Request | undefined> = fc.oneof(
  { weight: 2, arbitrary: slotRequest },
  { weight: 1, arbitrary: slotsRequest },
  { weight: 5, arbitrary: submitRequest },
  { weight: 2, arbitrary: watchRequest },
  { weight: 1, arbitrary: resultRequest },
  { weight: 2, arbitrary: runTasksRequest },
  { weight: 2, arbitrary: rawRequest },
);

/** Why `outcome` breaks the property, or undefined. */
function violation(req: Request, outcome: Outcome): string | undefined {
  const { code, details } = outcome;
  if (Buffer.byteLength(details) > MAX_STATUS_MESSAGE_BYTES + 3)
    return `a status message of ${Buffer.byteLength(details)} bytes`;
  switch (code) {
    case grpc.status.OK:
    case grpc.status.INVALID_ARGUMENT:
    case grpc.status.NOT_FOUND:
    case grpc.status.ALREADY_EXISTS:
    case grpc.status.FAILED_PRECONDITION:
    case grpc.status.RESOURCE_EXHAUSTED:
    case grpc.status.OUT_OF_RANGE:
    case grpc.status.ABORTED:
    case grpc.status.CANCELLED:
      return undefined;
    case grpc.status.INTERNAL:
      // grpc-js refuses a body protobuf cannot decode with INTERNAL itself, before any handler runs.
      return req.raw && details.startsWith('Error deserializing request')
        ? undefined
        : `INTERNAL: ${details}`;
    default:
      return `${grpc.status[code]}: ${details}`;
  }
}

describe('fuzzing a real worker over gRPC', () => {
  it(
    `answers ${RUNS} hostile requests with a bounded client-error status, and stays up`,
    async () => {
      const seen = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(request, async (req) => {
          if (req === undefined) return; // the client could not encode it
          const started = Date.now();
          const outcome = await call(req.method, req.bodies);
          const key = `${req.method}${req.raw ? ' raw' : ''} → ${grpc.status[outcome.code]}`;
          seen.set(key, (seen.get(key) ?? 0) + 1);
          const why = violation(req, outcome);
          expect(why, `${req.what} (after ${Date.now() - started} ms)`).toBeUndefined();
          const health = await healthy();
          expect(health.code, `health after ${req.what}: ${health.details}`).toBe(grpc.status.OK);
          expect(health.responses[0]?.toString('hex')).toBe('0801');
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      // The fuzzer reached both answers and refusals of each RPC (so the property was not vacuous).
      const keys = [...seen.keys()];
      for (const method of ['RequestTaskSlot', 'SubmitTask', 'WatchTasks'])
        expect(
          keys.filter((k) => k.startsWith(`${method} →`)).length,
          `${method}: ${keys.join(', ')}`,
        ).toBeGreaterThan(0);
      expect(keys.some((k) => k.endsWith('→ INVALID_ARGUMENT'))).toBe(true);
      expect(keys.some((k) => k.endsWith('→ OK'))).toBe(true);
    },
    FUZZ_TIMEOUT_MS,
  );

  it('a RunTasks stream whose second message protobuf cannot decode ends INVALID_ARGUMENT at once', async () => {
    // Found by the fuzzer (seed 1566145313): a decodable request, then garbage. grpc-js's own answer
    // (INTERNAL from inside the call, after the handler had written) never reached the client, and the
    // stream hung to its deadline.
    const bodies = [
      Buffer.from('0a808080808020003093b2f8a5b99be5d3b90128e599cdf3c491baa601', 'hex'),
      Buffer.from('4bd3feeb4c', 'hex'),
    ];
    const started = Date.now();
    const outcome = await bidiStream(service.RunTasks.path, bodies);
    expect(outcome.code, outcome.details).toBe(grpc.status.INVALID_ARGUMENT);
    expect(outcome.details).toMatch(/cannot decode/);
    expect(Date.now() - started).toBeLessThan(CALL_DEADLINE_MS / 2);
    const alone = await bidiStream(service.RunTasks.path, [bodies[1]!]);
    expect(alone.code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it('refuses a 100k-deep config with INVALID_ARGUMENT naming the JSON depth limit', async () => {
    const deep = Buffer.from(deepJson(100_000, 'array'));
    const deepArgs = Buffer.from(`{"function":"hello_world","callList":[${deepJson(100_000, 'object')}]}`);
    const cases: [string, unknown][] = [
      ['function_call_config', { type: 'CallListCallConfig', config: deep }],
      ['function_call_config (deep arguments)', { type: 'CallListCallConfig', config: deepArgs }],
      ['function_call_config (unknown plugin)', { type: 'NoSuchPlugin', config: deep }],
    ];
    for (const [name, functionCallConfig] of cases) {
      const outcome = await call('SubmitTask', [
        service.SubmitTask.requestSerialize({
          task: { taskId: `deep-${name}`, functionCallConfig },
          slotId: '',
        }),
      ]);
      expect(outcome.code, `${name}: ${outcome.details}`).toBe(grpc.status.INVALID_ARGUMENT);
      expect(outcome.details).toContain(`JSON depth limit ${MAX_JSON_DEPTH}`);
    }
    const handler = await call('SubmitTask', [
      service.SubmitTask.requestSerialize({
        task: {
          taskId: 'deep-handler',
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: Buffer.from('{"function":"hello_world","callList":[["a"]]}'),
          },
          resultHandler: { type: 'ReturnValueResultHandler', config: deep },
        },
        slotId: '',
      }),
    ]);
    expect(handler.code, handler.details).toBe(grpc.status.INVALID_ARGUMENT);
    expect(handler.details).toMatch(/result_handler\.config .*JSON depth limit/);
    // At the limit itself the config is parsed and checked as usual (here: the schema refuses it).
    const atLimit = await call('SubmitTask', [
      service.SubmitTask.requestSerialize({
        task: {
          taskId: 'deep-at-limit',
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: Buffer.from(deepJson(MAX_JSON_DEPTH, 'array')),
          },
        },
        slotId: '',
      }),
    ]);
    expect(atLimit.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(atLimit.details).not.toContain('JSON depth limit');
    // Through RunTasks the same check refuses the one task, not the stream.
    const stream = await call('RunTasks', [
      service.RunTasks.requestSerialize({
        tasks: [
          {
            task: { taskId: 'deep-stream', functionCallConfig: { type: 'CallListCallConfig', config: deep } },
          },
        ],
      }),
    ]);
    expect(stream.code, stream.details).toBe(grpc.status.OK);
    const admissions = stream.responses.flatMap(
      (b) =>
        (service.RunTasks.responseDeserialize(b) as { admissions: { error: { message: string } | null }[] })
          .admissions,
    );
    expect(admissions.map((a) => a.error?.message)).toEqual([expect.stringContaining('JSON depth limit')]);
  }, 30_000);

  it('afterwards runs a real task, on the executor it started with, and logged no oversized line', async () => {
    const taskId = `after-fuzz-${Date.now()}`;
    const submitted = await call('SubmitTask', [
      service.SubmitTask.requestSerialize({
        task: {
          taskId,
          functionCallConfig: {
            type: 'CallListCallConfig',
            config: Buffer.from('{"function":"hello_world","callList":[["fuzz"]]}'),
          },
          resultHandler: { type: 'ReturnValueResultHandler', config: Buffer.from('{}') },
        },
        slotId: '',
      }),
    ]);
    expect(submitted.code, submitted.details).toBe(grpc.status.OK);
    const watched = await call('WatchTasks', [service.WatchTasks.requestSerialize({ taskIds: [taskId] })]);
    expect(watched.code, watched.details).toBe(grpc.status.OK);
    const updates = watched.responses.map(
      (b) =>
        service.WatchTasks.responseDeserialize(b) as {
          isTerminal: boolean;
          result: { success: boolean } | null;
        },
    );
    expect(updates.at(-1)).toMatchObject({ isTerminal: true, result: { success: true } });
    expect(worker!.executorPids).toHaveLength(1);
    expect(worker!.child.exitCode).toBeNull();
    const longest = logLines.reduce((a, b) => (b.bytes > a.bytes ? b : a), { bytes: 0, head: '' });
    expect(longest.bytes, longest.head).toBeLessThan(MAX_LOG_LINE_BYTES);
    expect(logLines.length).toBeGreaterThan(0);
  }, 30_000);
});
