// A cheaper AsyncResource#bind for processes that make gRPC calls.
//
// Node 20's http2 calls `AsyncResource#bind` once for every client request (ClientHttp2Session#request
// binds its connect callback), and that `bind` attaches an `asyncResource` getter and setter to the bound
// function, each wrapped with util.deprecate (DEP0172). Building them costs 20–28 µs per call on our
// 2-core machines. In interleaved A/B runs (scratch, call by call in random order, same process), a
// `bind` without that property took a raw grpc-js unary echo to 0.85–0.89 of its stock p50 (five runs),
// and a ReserveWorkerSlot, whose client and Coordinator legs each make one request, to 0.89–0.90 (two).
//
// `installLeanAsyncResourceBind` replaces `AsyncResource.prototype.bind` with the same binding (the
// resource's async scope, the call-time `this` unless `thisArg` is given, the same `length`) minus the
// deprecated `asyncResource` property. Reading that property was deprecated in Node 20 and emits a
// warning; no BlockX code and none of our dependencies read it. The entry points install it when they
// are loaded — bin/blockx.js (every CLI process: coordinator, worker, executor, client commands), the
// `blockx` root entry (src/index.ts) and `blockx/client` (src/client/index.ts) — so a process that only
// imports `blockx/function` or `blockx/plugin` keeps Node's own; constructing a client does not install
// it. It is process-wide, idempotent, and a no-op on a Node whose own `bind` no longer adds the property.
import { AsyncResource } from 'node:async_hooks';

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

const LEAN = Symbol.for('blockx.leanAsyncResourceBind');

function leanBind(this: AsyncResource, fn: AnyFunction, thisArg?: unknown): AnyFunction {
  if (typeof fn !== 'function') {
    throw Object.assign(
      new TypeError(
        `The "fn" argument must be of type function. Received ${fn === null ? 'null' : typeof fn}`,
      ),
      { code: 'ERR_INVALID_ARG_TYPE' },
    );
  }
  const run = this.runInAsyncScope.bind(this) as (
    fn: AnyFunction,
    self: unknown,
    ...args: unknown[]
  ) => unknown;
  const bound: AnyFunction =
    thisArg === undefined
      ? function (this: unknown, ...args: unknown[]) {
          return run(fn, this, ...args);
        }
      : (...args: unknown[]) => run(fn, thisArg, ...args);
  Object.defineProperty(bound, 'length', { value: fn.length, configurable: true });
  return bound;
}
Object.defineProperty(leanBind, LEAN, { value: true });

/** Whether this Node's own `AsyncResource#bind` attaches the deprecated `asyncResource` property. */
function stockBindAddsProperty(bind: typeof AsyncResource.prototype.bind): boolean {
  const probe = bind.call(new AsyncResource('BlockxBindProbe'), () => undefined);
  return Object.getOwnPropertyDescriptor(probe, 'asyncResource') !== undefined;
}

/** Whether the lean `bind` is in place in this process (installed by any copy of this module). */
export function leanAsyncResourceBindInstalled(): boolean {
  return (AsyncResource.prototype.bind as unknown as { [LEAN]?: true })[LEAN] === true;
}

/**
 * Replaces `AsyncResource.prototype.bind` with the lean one (see the file comment). Returns true when the
 * lean `bind` is in place after the call (installed now or before), false when this Node does not need it.
 */
export function installLeanAsyncResourceBind(): boolean {
  if (leanAsyncResourceBindInstalled()) return true;
  if (!stockBindAddsProperty(AsyncResource.prototype.bind)) return false;
  Object.defineProperty(AsyncResource.prototype, 'bind', {
    value: leanBind,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  return true;
}
