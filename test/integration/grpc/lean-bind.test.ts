import { AsyncLocalStorage, AsyncResource, executionAsyncResource } from 'node:async_hooks';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkerClient } from '../../../src/grpc/clients.js';
import { installLeanAsyncResourceBind } from '../../../src/grpc/lean-bind.js';

// Node 20's own bind, captured before anything in this file installs the lean one.
const stockBind = AsyncResource.prototype.bind;
const nodeAddsProperty =
  Object.getOwnPropertyDescriptor(
    stockBind.call(new AsyncResource('Probe'), () => undefined),
    'asyncResource',
  ) !== undefined;

function restoreStockBind(): void {
  Object.defineProperty(AsyncResource.prototype, 'bind', {
    value: stockBind,
    writable: true,
    configurable: true,
  });
}

describe('installLeanAsyncResourceBind', () => {
  afterEach(restoreStockBind);

  it('replaces bind on a Node whose bind adds the deprecated property, and is idempotent', () => {
    expect(AsyncResource.prototype.bind).toBe(stockBind);
    expect(installLeanAsyncResourceBind()).toBe(nodeAddsProperty);
    const installed = AsyncResource.prototype.bind;
    expect(installLeanAsyncResourceBind()).toBe(nodeAddsProperty);
    expect(AsyncResource.prototype.bind).toBe(installed);
    if (nodeAddsProperty) expect(installed).not.toBe(stockBind);
  });

  it('is not installed by constructing a client', () => {
    expect(AsyncResource.prototype.bind).toBe(stockBind);
    const client = createWorkerClient('127.0.0.1:1');
    client.close();
    expect(AsyncResource.prototype.bind).toBe(stockBind);
  });

  // A query string makes vite evaluate the entry module again, so its install runs after the restore.
  it.each(['../../../src/client/index.js?entry', '../../../src/index.js?entry'])(
    'is installed by loading the entry point %s',
    async (entry) => {
      expect(AsyncResource.prototype.bind).toBe(stockBind);
      await import(/* @vite-ignore */ entry);
      if (nodeAddsProperty) expect(AsyncResource.prototype.bind).not.toBe(stockBind);
      else expect(AsyncResource.prototype.bind).toBe(stockBind);
    },
  );

  describe('the lean bind does what Node documents for bind', () => {
    beforeEach(() => {
      installLeanAsyncResourceBind();
    });
    const als = new AsyncLocalStorage<string>();

    it('runs the function in the async scope of the resource, not of the caller', () => {
      const resource = als.run('at bind', () => new AsyncResource('T'));
      const bound = resource.bind(() => [als.getStore(), executionAsyncResource()]);
      const [store, current] = als.run('at call', bound) as [string, object];
      expect(store).toBe('at bind');
      expect(current).toBe(resource);
    });

    it('passes arguments and the return value through', () => {
      const bound = new AsyncResource('T').bind((a: number, b: number) => a + b);
      expect(bound(2, 3)).toBe(5);
    });

    it('uses the call-time this without thisArg, and thisArg when given', () => {
      function self(this: unknown): unknown {
        return this;
      }
      const resource = new AsyncResource('T');
      const target = { f: resource.bind(self) };
      expect(target.f()).toBe(target);
      const fixed = { name: 'fixed' };
      const bindWith = resource.bind as unknown as (fn: () => unknown, thisArg: unknown) => () => unknown;
      const other = { f: bindWith.call(resource, self, fixed) };
      expect(other.f()).toBe(fixed);
    });

    it('keeps the length of the function, and drops the deprecated asyncResource property', () => {
      const bound = new AsyncResource('T').bind((_a: number, _b: string, _c: boolean) => undefined);
      expect(bound.length).toBe(3);
      expect(Object.getOwnPropertyDescriptor(bound, 'asyncResource')).toBeUndefined();
    });

    it('propagates a thrown error', () => {
      const bound = new AsyncResource('T').bind(() => {
        throw new Error('boom');
      });
      expect(() => bound()).toThrow('boom');
    });

    it('rejects a non-function with ERR_INVALID_ARG_TYPE, as Node does', () => {
      const resource = new AsyncResource('T');
      for (const fn of [undefined, null, 1, 'f', {}]) {
        expect(() => resource.bind(fn as never)).toThrow(
          expect.objectContaining({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }),
        );
      }
    });

    it('keeps the static AsyncResource.bind working', () => {
      const bound = als.run('outer', () => AsyncResource.bind(() => als.getStore()));
      expect(bound()).toBe('outer');
    });

    it('keeps an http2 client request in the async context it was made in', async () => {
      const server = http2.createServer((_req, res) => res.end('ok'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const session = http2.connect(`http://127.0.0.1:${port}`);
      try {
        const seen = await als.run('request', async () => {
          // Made before the session connects: http2 runs the request from the connect callback it bound.
          const req = session.request({ ':path': '/' });
          const store = await new Promise<string | undefined>((resolve, reject) => {
            req.on('response', () => resolve(als.getStore()));
            req.on('error', reject);
          });
          req.resume();
          await new Promise((resolve) => req.on('end', resolve));
          return store;
        });
        expect(seen).toBe('request');
      } finally {
        session.close();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});
