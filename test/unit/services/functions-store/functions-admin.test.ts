// The functions RPCs of CoordinatorAdminService (src/services/coordinator/adapters/functions-admin.ts)
// over a store on the in-memory backend: answers in the wire shape, store errors as gRPC statuses with
// the store's code in the metadata, and FAILED_PRECONDITION from a coordinator without a store.
import { silentLogger } from '../../../../src/kernel/observability/service-logger.js';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { functionsAdminHandlers } from '../../../../src/services/coordinator/adapters/functions-admin.js';
import { BLOCKX_ERROR_CODE_KEY } from '../../../../src/grpc/status.js';
import { encodeBundle } from '../../../../src/services/functions-store/bundle.js';
import { FunctionsStoreError } from '../../../../src/services/functions-store/errors.js';
import { FunctionsStore } from '../../../../src/services/functions-store/functions-store.js';
import { MemoryFunctionsKv } from '../../../../src/services/functions-store/memory-kv.js';

type Handler = (
  call: { request: unknown },
  cb: (err: grpc.ServiceError | null, res?: unknown) => void,
) => void;

function invoke(
  handler: unknown,
  request: unknown,
): Promise<{ err: grpc.ServiceError | null; res?: unknown }> {
  return new Promise((resolve) => (handler as Handler)({ request }, (err, res) => resolve({ err, res })));
}

const folder = (mark: string) => [{ fileName: 'probe.ts', source: `export default () => '${mark}';\n` }];

describe('functionsAdminHandlers', () => {
  it('deploy, list and use answer in the wire shape', async () => {
    const h = functionsAdminHandlers(new FunctionsStore(new MemoryFunctionsKv()), silentLogger);
    const a = encodeBundle(folder('a'), 1);
    const b = encodeBundle(folder('b'), 2);
    const first = await invoke(h.DeployFunctions, { bundle: a.stored, version: a.version });
    expect(first.err).toBeNull();
    expect(first.res).toMatchObject({
      entry: { version: a.version, fileNames: ['probe.ts'] },
      changed: true,
      previous: '',
    });
    await invoke(h.DeployFunctions, { bundle: b.stored, version: b.version });
    const list = await invoke(h.ListFunctions, {});
    expect(list.res).toMatchObject({
      current: b.version,
      versions: [{ version: a.version }, { version: b.version }],
    });
    const used = await invoke(h.UseFunctions, { version: a.version.slice(0, 6) });
    expect(used.res).toMatchObject({ entry: { version: a.version }, changed: true, previous: b.version });
  });

  it.each([
    [
      'a bundle that does not hash to its claimed version',
      () => ({ bundle: encodeBundle(folder('a'), 1).stored, version: encodeBundle(folder('b'), 1).version }),
      'BUNDLE_TAMPERED',
    ],
    [
      'a version that is not 16 hex digits',
      () => ({ bundle: Buffer.alloc(0), version: 'x' }),
      'BUNDLE_CORRUPT',
    ],
    ['garbage bytes', () => ({ bundle: Buffer.from('nope'), version: '0123456789abcdef' }), 'BUNDLE_CORRUPT'],
  ])('refuses %s with INVALID_ARGUMENT and the store code', async (_what, request, code) => {
    const h = functionsAdminHandlers(new FunctionsStore(new MemoryFunctionsKv()), silentLogger);
    const { err } = await invoke(h.DeployFunctions, request());
    expect(err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err?.metadata.get(BLOCKX_ERROR_CODE_KEY)).toEqual([code]);
  });

  it('use of an unknown version is NOT_FOUND; before any deploy FAILED_PRECONDITION', async () => {
    const h = functionsAdminHandlers(new FunctionsStore(new MemoryFunctionsKv()), silentLogger);
    expect((await invoke(h.UseFunctions, { version: 'abcd' })).err?.code).toBe(
      grpc.status.FAILED_PRECONDITION,
    );
    const a = encodeBundle(folder('a'), 1);
    await invoke(h.DeployFunctions, { bundle: a.stored, version: a.version });
    const { err } = await invoke(h.UseFunctions, { version: 'ffff' });
    expect(err?.code).toBe(grpc.status.NOT_FOUND);
    expect(err?.details).toMatch(/keeps the last 10 deployed versions/);
  });

  it.each([
    ["a store error that is no caller's mistake", new FunctionsStoreError('BUNDLE_UNTRUSTED', 'unsigned')],
    ['an error of no store code', Object.assign(new Error('kv down'), { code: 'ECONNRESET' })],
  ])('%s is INTERNAL, naming the RPC, with no business code', async (_what, thrown) => {
    const failing = { list: () => Promise.reject(thrown) } as unknown as FunctionsStore;
    const { err } = await invoke(functionsAdminHandlers(failing, silentLogger).ListFunctions, {});
    expect(err?.code).toBe(grpc.status.INTERNAL);
    expect(err?.details).toBe(`ListFunctions: ${thrown.message}`);
    expect(err?.metadata.get(BLOCKX_ERROR_CODE_KEY)).toEqual([]);
  });

  it('a coordinator without a store refuses every call with FAILED_PRECONDITION, saying what to do', async () => {
    const h = functionsAdminHandlers(undefined, silentLogger);
    for (const [handler, req] of [
      [h.DeployFunctions, { bundle: Buffer.alloc(0), version: '' }],
      [h.UseFunctions, { version: 'abcd' }],
      [h.ListFunctions, {}],
    ] as const) {
      const { err } = await invoke(handler, req);
      expect(err?.code).toBe(grpc.status.FAILED_PRECONDITION);
      expect(err?.details).toMatch(
        /holds no functions store: with etcd, `blockx functions` writes etcd itself/,
      );
    }
  });
});
