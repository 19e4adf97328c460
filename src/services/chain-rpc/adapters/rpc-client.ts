// RpcClient: JSON-RPC over HTTP to one source, driven by the RequestScheduler core (../core/request-scheduler.ts),
// which decides when and where each HTTP request goes and whether a failed one is tried again. This file does
// the IO: it posts bodies (through the HttpPost port, node:http with keep-alive sockets by default:
// ./http-post.ts), classifies what comes back into the core's failure kinds, arms the one timer the core
// asks for, and turns the core's verdicts into answers or ChainRpcErrors that name the source, the masked
// URL and the method (docs/ingest.md § The RPC access layer).
//
// One HTTP request carries one call, or a batch of calls (`batch`): the scheduler sees one request either
// way, so a batch costs one slot of the concurrency and rate limits. A JSON-RPC error inside an answer is
// the node's answer, not a transport failure: `batch` hands it back as a value, `call` throws it.
import { DeadlineTimer } from '../../../kernel/deadline-timer.js';
import type { SourceConfig } from '../../../kernel/config-types.js';
import { ChainRpcError, ChainRpcErrorCode } from '../errors.js';
import { maskRpcUrl } from '../url-mask.js';
import { keepAlivePoster, type HttpAnswer, type HttpPost, type HttpPoster } from './http-post.js';
import {
  RequestScheduler,
  type AttemptFailure,
  type SchedulerCommand,
  type SchedulerInput,
  type SchedulerLimits,
} from '../core/request-scheduler.js';

export type { HttpAnswer, HttpPost } from './http-post.js';

/** The request limits of a source, as `sources.<name>` declares them (the config field table). */
export type RpcLimits = Pick<
  SourceConfig,
  | 'maxConcurrentRequests'
  | 'requestsPerSecond'
  | 'requestBurst'
  | 'requestTimeoutMs'
  | 'maxAttempts'
  | 'initialBackoffMs'
  | 'maxBackoffMs'
  | 'maxRetryAfterMs'
>;

export interface RpcSourceSettings extends RpcLimits {
  /** Shown in every error (`sources.<name>`, or `rpc` for a bare `--rpc URL`). */
  readonly name: string;
  /** The primary URL first, then the fallback, if any. */
  readonly urls: readonly string[];
}

export interface RpcCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** One call's answer inside a batch: its result, or the node's error for it. */
export type RpcAnswer =
  { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: ChainRpcError };

export interface RpcClientDeps {
  readonly post?: HttpPost;
  readonly now?: () => number;
  readonly random?: () => number;
}

interface Pending {
  readonly body: string;
  readonly method: string;
  readonly ids: readonly number[];
  readonly resolve: (answers: RpcAnswer[]) => void;
  readonly reject: (err: unknown) => void;
  answers?: RpcAnswer[];
  lastDetail: string;
  lastUrl: string;
  lastStatus: number | undefined;
}

/** Counters for progress reports and the bench (HTTP requests sent, calls they carried). */
export interface RpcStats {
  httpRequests: number;
  rpcCalls: number;
  retries: number;
}

const METHOD_MISSING =
  /method .*(not found|not supported|not available|does not exist)|unsupported method|not implemented/i;

export class RpcClient {
  readonly stats: RpcStats = { httpRequests: 0, rpcCalls: 0, retries: 0 };
  private readonly scheduler: RequestScheduler;
  private readonly pending = new Map<number, Pending>();
  private readonly post: HttpPost;
  /** The default port's sockets, closed with the client (none when a port was given). */
  private readonly poster: HttpPoster | undefined;
  private readonly now: () => number;
  private readonly masked: readonly string[];
  private nextRequestId = 1;
  private nextCallId = 1;
  /** Kept alive: a CLI waiting out a retry backoff has nothing else holding the process. */
  private readonly timer = new DeadlineTimer(() => this.feed({ type: 'tick', now: this.now() }), {
    keepAlive: true,
  });
  private readonly closed = new AbortController();

  private current: RpcSourceSettings;

  constructor(settings: RpcSourceSettings, deps: RpcClientDeps = {}) {
    this.current = settings;
    if (settings.urls.length === 0) throw new Error(`source ${settings.name} has no URL`);
    for (const url of settings.urls) {
      if (!/^https?:\/\/[^/]/i.test(url) || !URL.canParse(url)) {
        throw new Error(`source ${settings.name}: ${maskRpcUrl(url)} is not an http:// or https:// URL`);
      }
    }
    this.poster = deps.post === undefined ? keepAlivePoster() : undefined;
    this.post = deps.post ?? (this.poster as HttpPoster).post;
    this.now = deps.now ?? Date.now;
    this.masked = settings.urls.map(maskRpcUrl);
    this.scheduler = new RequestScheduler(schedulerLimits(settings), deps.random ?? Math.random);
  }

  /** The source's name, URLs and limits in force. */
  get settings(): RpcSourceSettings {
    return this.current;
  }

  /**
   * New limits for what follows (the URLs stay): what is queued or in flight keeps going, and a request
   * already waiting goes as soon as the new limits allow (adapters/shared-clients.ts: a task of the process
   * asked for other limits).
   */
  reconfigure(limits: RpcLimits): void {
    if (this.closed.signal.aborted) return;
    this.current = { ...this.current, ...limits };
    for (const cmd of this.scheduler.reconfigure(schedulerLimits(this.current), this.now())) {
      this.perform(cmd);
    }
    this.arm();
  }

  /** The primary URL, credentials masked (for messages). */
  get maskedUrl(): string {
    return this.masked[0] as string;
  }

  /** One call; its JSON-RPC error, if any, is thrown as a ChainRpcError. */
  async call<T = unknown>(method: string, params: readonly unknown[] = []): Promise<T> {
    const [answer] = await this.batch([{ method, params }]);
    if (answer === undefined) throw new Error('no answer');
    if (!answer.ok) throw answer.error;
    return answer.result as T;
  }

  /**
   * Several calls in one HTTP request (a JSON-RPC batch; a single call goes as a plain request). Transport
   * failures (after the retries the scheduler allows) reject; each call's own JSON-RPC error is its answer.
   */
  batch(calls: readonly RpcCall[]): Promise<RpcAnswer[]> {
    if (this.closed.signal.aborted)
      return Promise.reject(new Error(`source ${this.settings.name}: client closed`));
    if (calls.length === 0) return Promise.resolve([]);
    const ids = calls.map(() => this.nextCallId++);
    const requests = calls.map((c, i) => ({
      jsonrpc: '2.0',
      id: ids[i],
      method: c.method,
      params: c.params,
    }));
    const body = JSON.stringify(calls.length === 1 ? requests[0] : requests);
    const method = calls.map((c) => c.method).join('+');
    const id = this.nextRequestId++;
    this.stats.rpcCalls += calls.length;
    return new Promise<RpcAnswer[]>((resolve, reject) => {
      this.pending.set(id, {
        body,
        method,
        ids,
        resolve,
        reject,
        lastDetail: '',
        lastUrl: this.maskedUrl,
        lastStatus: undefined,
      });
      this.feed({ type: 'submit', id, now: this.now() });
    });
  }

  /** Rejects what is pending and stops the timer. */
  close(): void {
    this.closed.abort();
    this.timer.stop();
    this.poster?.close();
    for (const p of this.pending.values()) p.reject(new Error(`source ${this.settings.name}: client closed`));
    this.pending.clear();
  }

  private feed(input: SchedulerInput): void {
    for (const cmd of this.scheduler.handle(input)) this.perform(cmd);
    this.arm();
  }

  private perform(cmd: SchedulerCommand): void {
    const p = this.pending.get(cmd.id);
    if (p === undefined) return;
    switch (cmd.type) {
      case 'send':
        if (cmd.attempt > 1) this.stats.retries++;
        void this.attempt(cmd.id, p, cmd.endpoint, cmd.timeoutMs);
        break;
      case 'resolve':
        this.pending.delete(cmd.id);
        p.resolve(p.answers ?? []);
        break;
      case 'fail':
        this.pending.delete(cmd.id);
        p.reject(this.failure(p, cmd.failure, cmd.attempts, cmd.retryable));
        break;
      default:
        throw new Error(`unexpected command ${JSON.stringify(cmd satisfies never)}`);
    }
  }

  private async attempt(id: number, p: Pending, endpoint: number, timeoutMs: number): Promise<void> {
    const url = this.settings.urls[endpoint] as string;
    p.lastUrl = this.masked[endpoint] as string;
    p.lastStatus = undefined;
    this.stats.httpRequests++;
    let failure: AttemptFailure | undefined;
    try {
      const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), this.closed.signal]);
      const answer = await this.post(url, p.body, signal);
      failure = this.readAnswer(p, answer);
    } catch (err) {
      if (this.closed.signal.aborted) return;
      const name = (err as { name?: string }).name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        failure = { kind: 'timeout' };
        p.lastDetail = `no answer within ${timeoutMs} ms`;
      } else {
        failure = { kind: 'connection' };
        // The driver's message may quote the URL: never the unmasked one.
        p.lastDetail = connectionDetail(err).split(url).join(p.lastUrl);
      }
    }
    if (this.closed.signal.aborted) return;
    const now = this.now();
    this.feed(failure === undefined ? { type: 'succeeded', id, now } : { type: 'failed', id, failure, now });
  }

  /** Parses an HTTP answer into `p.answers`; returns the failure kind when it is not usable. */
  private readAnswer(p: Pending, answer: HttpAnswer): AttemptFailure | undefined {
    p.lastStatus = answer.status;
    if (answer.status !== 200) {
      p.lastDetail = `HTTP ${answer.status}${answer.body ? `: ${answer.body.slice(0, 200)}` : ''}`;
      if (answer.status !== 429) return { kind: 'http', status: answer.status };
      const retryAfterMs = parseRetryAfter(answer.retryAfter, this.now());
      if (retryAfterMs !== undefined && retryAfterMs > this.settings.maxRetryAfterMs) {
        p.lastDetail += ` (Retry-After ${retryAfterMs} ms exceeds maxRetryAfterMs ${this.settings.maxRetryAfterMs})`;
        return { kind: 'fatal' };
      }
      return { kind: 'http', status: 429, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body);
    } catch (err) {
      p.lastDetail = `the body is not JSON (${(err as Error).message}; ${answer.body.length} bytes)`;
      return { kind: 'malformed' };
    }
    const list = Array.isArray(parsed) ? parsed : [parsed];
    const byId = new Map<unknown, Record<string, unknown>>();
    for (const item of list) {
      if (typeof item !== 'object' || item === null) {
        p.lastDetail = 'the answer is not a JSON-RPC response';
        return { kind: 'fatal' };
      }
      byId.set((item as { id?: unknown }).id, item as Record<string, unknown>);
    }
    const answers: RpcAnswer[] = [];
    const methods = p.method.split('+');
    for (const [i, callId] of p.ids.entries()) {
      const item = byId.get(callId);
      if (item === undefined) {
        p.lastDetail = `the answer misses the response to call ${callId} (${methods[i]})`;
        return { kind: 'malformed' };
      }
      answers.push(this.answerOf(item, methods[i] as string, p.lastUrl));
    }
    p.answers = answers;
    return undefined;
  }

  private answerOf(item: Record<string, unknown>, method: string, url: string): RpcAnswer {
    const error = item['error'];
    if (error === undefined || error === null) {
      if (!('result' in item)) {
        const err = new ChainRpcError(ChainRpcErrorCode.BAD_RESPONSE, 'a response without result or error', {
          source: this.settings.name,
          url,
          method,
          retryable: false,
        });
        return { ok: false, error: err };
      }
      return { ok: true, result: item['result'] };
    }
    const e = error as { code?: unknown; message?: unknown };
    const rpcCode = typeof e.code === 'number' ? e.code : undefined;
    const message = typeof e.message === 'string' ? e.message : JSON.stringify(error);
    const missing = rpcCode === -32601 || METHOD_MISSING.test(message);
    const err = new ChainRpcError(
      missing ? ChainRpcErrorCode.METHOD_NOT_SUPPORTED : ChainRpcErrorCode.RPC_ERROR,
      `the node answered error ${rpcCode ?? '?'}: ${message.slice(0, 300)}`,
      {
        source: this.settings.name,
        url,
        method,
        retryable: false,
        ...(rpcCode !== undefined ? { rpcCode } : {}),
      },
    );
    return { ok: false, error: err };
  }

  private failure(p: Pending, failure: AttemptFailure, attempts: number, retryable: boolean): ChainRpcError {
    // A 429 whose Retry-After is past maxRetryAfterMs fails at once (fatal), still as a rate limit.
    const code = p.lastStatus === 429 ? ChainRpcErrorCode.RATE_LIMITED : codeOf(failure);
    return new ChainRpcError(code, p.lastDetail, {
      source: this.settings.name,
      url: p.lastUrl,
      method: p.method,
      attempts,
      retryable,
      ...(failure.kind === 'http' ? { httpStatus: failure.status } : {}),
    });
  }

  private arm(): void {
    this.timer.arm(this.scheduler.nextDeadline(), this.now());
  }
}

function schedulerLimits(settings: RpcSourceSettings): SchedulerLimits {
  return {
    maxConcurrent: settings.maxConcurrentRequests,
    requestsPerSecond: settings.requestsPerSecond,
    burst: settings.requestBurst,
    timeoutMs: settings.requestTimeoutMs,
    maxAttempts: settings.maxAttempts,
    initialBackoffMs: settings.initialBackoffMs,
    maxBackoffMs: settings.maxBackoffMs,
    endpoints: settings.urls.length,
  };
}

function codeOf(failure: AttemptFailure): ChainRpcErrorCode {
  switch (failure.kind) {
    case 'timeout':
      return ChainRpcErrorCode.TIMEOUT;
    case 'connection':
      return ChainRpcErrorCode.UNREACHABLE;
    case 'malformed':
    case 'fatal':
      return ChainRpcErrorCode.BAD_RESPONSE;
    case 'http':
      return failure.status === 429 ? ChainRpcErrorCode.RATE_LIMITED : ChainRpcErrorCode.HTTP_STATUS;
    default:
      throw new Error(`unexpected failure ${JSON.stringify(failure satisfies never)}`);
  }
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function connectionDetail(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const cause = e.code !== undefined ? e : e.cause;
  if (cause?.code !== undefined)
    return `cannot connect (${cause.code}${cause.message ? `: ${cause.message}` : ''})`;
  return `cannot connect (${(err as Error).message ?? String(err)})`;
}
