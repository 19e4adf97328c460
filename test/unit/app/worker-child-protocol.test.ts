// Requests between `blockx up` and a Worker child (src/app/worker-child/protocol.ts): each gets exactly
// one outcome — its reply's value or error, the channel's failure, a timeout, or failAll when the other
// process exits — and a reply that comes too late is dropped.
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  answer,
  PendingRequests,
  type IpcReply,
  type IpcRequest,
} from '../../../src/app/worker-child/protocol.js';

afterEach(() => vi.useRealTimers());

function channel() {
  const sent: IpcRequest[] = [];
  return { sent, send: (m: IpcRequest) => void sent.push(m) };
}

describe('PendingRequests', () => {
  it('resolves each request with the value of the reply carrying its id, in whatever order replies come', async () => {
    const pending = new PendingRequests();
    const { sent, send } = channel();
    const a = pending.request(send, 'functions.current');
    const b = pending.request(send, 'functions.fetch', { version: 'v1' });
    expect(sent).toEqual([
      { kind: 'request', id: 1, what: 'functions.current' },
      { kind: 'request', id: 2, what: 'functions.fetch', arg: { version: 'v1' } },
    ]);
    pending.settleReply({ kind: 'reply', id: 2, ok: true, value: 'bundle' });
    pending.settleReply({ kind: 'reply', id: 1, ok: false, error: 'no version deployed' });
    await expect(b).resolves.toBe('bundle');
    await expect(a).rejects.toThrow('no version deployed');
  });

  it('a send that throws rejects the request at once', async () => {
    const pending = new PendingRequests();
    const gone = (): void => {
      throw new Error('the process is gone');
    };
    await expect(pending.request(gone, 'metrics')).rejects.toThrow('the process is gone');
  });

  it('failAll rejects every waiting request; replies after it are dropped', async () => {
    const pending = new PendingRequests();
    const { send } = channel();
    const waiting = [pending.request(send, 'metrics'), pending.request(send, 'metrics')];
    pending.failAll('worker #0 exited');
    for (const p of waiting) await expect(p).rejects.toThrow('worker #0 exited');
    expect(() => pending.settleReply({ kind: 'reply', id: 1, ok: true, value: [] })).not.toThrow();
  });

  it('a request not answered within its timeout fails; its late reply is dropped', async () => {
    vi.useFakeTimers();
    const pending = new PendingRequests();
    const { send } = channel();
    const slow = pending.request(send, 'metrics', undefined, 2_000);
    const outcome = slow.catch((err: Error) => err.message);
    vi.advanceTimersByTime(1_999);
    pending.settleReply({ kind: 'reply', id: 99, ok: true, value: [] }); // another id: ignored
    vi.advanceTimersByTime(1);
    expect(await outcome).toMatch(/metrics: no answer .* within 2000 ms/);
    pending.settleReply({ kind: 'reply', id: 1, ok: true, value: [] });
  });
});

describe('answer', () => {
  const request: IpcRequest = { kind: 'request', id: 7, what: 'metrics' };

  it("replies with the handler's value under the request's id", async () => {
    const replies: IpcReply[] = [];
    await answer(
      request,
      async () => [1, 2],
      (r) => void replies.push(r),
    );
    expect(replies).toEqual([{ kind: 'reply', id: 7, ok: true, value: [1, 2] }]);
  });

  it("replies with the handler's error message, and stays quiet when the asker is gone", async () => {
    const replies: IpcReply[] = [];
    await answer(
      request,
      () => Promise.reject(new Error('no store')),
      (r) => void replies.push(r),
    );
    expect(replies).toEqual([{ kind: 'reply', id: 7, ok: false, error: 'no store' }]);
    const gone = (): void => {
      throw new Error('channel closed');
    };
    await expect(answer(request, async () => 1, gone)).resolves.toBeUndefined();
  });
});
