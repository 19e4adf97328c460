// SubscriptionManager against a fake host (snapshots by id, attach/detach recorded) and fake sinks.
import { describe, expect, it } from 'vitest';
import {
  NOT_FOUND_ERROR,
  SubscriptionManager,
  type SubscriptionHost,
  type WatchSink,
  type WatchUpdate,
} from '../../../../../../src/services/worker/adapters/grpc/subscription-manager.js';
import {
  TaskState,
  type TaskResult,
  type TaskSnapshot,
} from '../../../../../../src/services/worker/core/index.js';

const OK: TaskResult = {
  success: true,
  executeResult: { failureCode: '', retryable: false, pluginResults: [], failureMessage: '' },
};

function fakeHost(snapshots: Record<string, TaskSnapshot>) {
  const events: string[] = [];
  const host: SubscriptionHost = {
    taskSnapshot: (id) => snapshots[id] ?? { found: false, taskId: id },
    watchAttached: (id) => events.push(`attach ${id}`),
    watchDetached: (id) => events.push(`detach ${id}`),
    now: () => 42,
  };
  return { host, events };
}

function running(taskId: string): TaskSnapshot {
  return { found: true, taskId, state: TaskState.RUNNING, terminal: false, result: undefined };
}

function recordingSink() {
  const updates: WatchUpdate[] = [];
  let ended = 0;
  const sink: WatchSink = {
    send: (u) => updates.push(u),
    end: () => ended++,
  };
  return { sink, updates, ended: () => ended };
}

describe('SubscriptionManager', () => {
  it('sends one snapshot per id in request order, not_found for unknown ids', () => {
    const { host } = fakeHost({
      a: running('a'),
      done: { found: true, taskId: 'done', state: TaskState.SUCCEEDED, terminal: true, result: OK },
    });
    const m = new SubscriptionManager(host, () => '127.0.0.1:9090');
    const s = recordingSink();
    m.watch(['a', 'nope', 'done', 'a'], s.sink);
    expect(s.updates).toEqual([
      {
        taskId: 'a',
        state: TaskState.RUNNING,
        isTerminal: false,
        workerAddr: '127.0.0.1:9090',
        timestampMs: 42,
        error: '',
      },
      {
        taskId: 'nope',
        state: TaskState.UNSPECIFIED,
        isTerminal: true,
        workerAddr: '127.0.0.1:9090',
        timestampMs: 42,
        error: NOT_FOUND_ERROR,
      },
      {
        taskId: 'done',
        state: TaskState.SUCCEEDED,
        isTerminal: true,
        workerAddr: '127.0.0.1:9090',
        timestampMs: 42,
        error: '',
        result: OK,
      },
    ]);
    expect(s.ended()).toBe(0);
    expect(m.openStreams).toBe(1);
  });

  it('ends the stream at once when every id is already terminal or unknown', () => {
    const { host, events } = fakeHost({});
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    m.watch(['x', 'y'], s.sink);
    expect(s.updates.map((u) => u.error)).toEqual(['not_found', 'not_found']);
    expect(s.ended()).toBe(1);
    expect(events).toEqual([]);
    expect(m.openStreams).toBe(0);
  });

  it('ends an empty request at once', () => {
    const m = new SubscriptionManager(fakeHost({}).host, () => 'w');
    const s = recordingSink();
    m.watch([], s.sink);
    expect(s.updates).toEqual([]);
    expect(s.ended()).toBe(1);
  });

  it('pushes exactly one terminal update per running id, then ends', () => {
    const { host, events } = fakeHost({ a: running('a'), b: running('b') });
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    m.watch(['a', 'b'], s.sink);
    expect(events).toEqual(['attach a', 'attach b']);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    expect(s.updates.filter((u) => u.isTerminal)).toHaveLength(1);
    expect(s.ended()).toBe(0);
    m.onTerminal('b', TaskState.FAILED, OK);
    expect(s.updates.map((u) => [u.taskId, u.state, u.isTerminal])).toEqual([
      ['a', TaskState.RUNNING, false],
      ['b', TaskState.RUNNING, false],
      ['a', TaskState.SUCCEEDED, true],
      ['b', TaskState.FAILED, true],
    ]);
    expect(s.ended()).toBe(1);
    expect(events).toEqual(['attach a', 'attach b', 'detach a', 'detach b']);
    expect(m.openStreams).toBe(0);
    expect(m.watchedTasks).toBe(0);
  });

  it('delivers a terminal update to every stream watching the task', () => {
    const { host } = fakeHost({ a: running('a') });
    const m = new SubscriptionManager(host, () => 'w');
    const s1 = recordingSink();
    const s2 = recordingSink();
    m.watch(['a'], s1.sink);
    m.watch(['a'], s2.sink);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    expect(s1.ended()).toBe(1);
    expect(s2.ended()).toBe(1);
    expect(s2.updates.at(-1)).toMatchObject({ taskId: 'a', isTerminal: true, result: OK });
  });

  it('a client that goes away detaches what is still pending, once', () => {
    const { host, events } = fakeHost({ a: running('a'), b: running('b') });
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    const handle = m.watch(['a', 'b'], s.sink);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    handle.close();
    handle.close();
    expect(events).toEqual(['attach a', 'attach b', 'detach a', 'detach b']);
    m.onTerminal('b', TaskState.SUCCEEDED, OK);
    expect(s.updates.filter((u) => u.isTerminal)).toHaveLength(1);
    expect(s.ended()).toBe(0);
    expect(m.openStreams).toBe(0);
  });

  it('an ALLOCATED id whose slot expired gets a not_found terminal update', () => {
    const { host } = fakeHost({
      r: { found: true, taskId: 'r', state: TaskState.ALLOCATED, terminal: false, result: undefined },
    });
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    m.watch(['r'], s.sink);
    m.onSlotReclaimed('r');
    expect(s.updates.at(-1)).toMatchObject({ taskId: 'r', isTerminal: true, error: 'not_found' });
    expect(s.ended()).toBe(1);
  });

  it('a sink that throws closes its subscription and detaches it', () => {
    const { host, events } = fakeHost({ a: running('a') });
    const m = new SubscriptionManager(host, () => 'w');
    let calls = 0;
    m.watch(['a'], {
      send: () => {
        if (++calls > 1) throw new Error('stream gone');
      },
      end: () => undefined,
    });
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    expect(events).toEqual(['attach a', 'detach a']);
    expect(m.openStreams).toBe(0);
  });
});

describe('SubscriptionManager.attach (RunTasks streams)', () => {
  const done = (taskId: string): TaskSnapshot => ({
    found: true,
    taskId,
    state: TaskState.SUCCEEDED,
    terminal: true,
    result: OK,
  });

  it('registers running ids without a snapshot, counting each as an attached watch', () => {
    const { host, events } = fakeHost({ a: running('a'), b: running('b') });
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    const watch = m.attach(['a'], s.sink);
    watch.attach(['b', 'a']);
    expect(s.updates).toEqual([]);
    expect(events).toEqual(['attach a', 'attach b']);
    expect([...watch.pending]).toEqual(['a', 'b']);
    expect(m.watchedTasks).toBe(2);
  });

  it('delivers one terminal update per id and is never ended by the manager', () => {
    const snapshots: Record<string, TaskSnapshot> = { a: running('a') };
    const { host, events } = fakeHost(snapshots);
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    const watch = m.attach(['a'], s.sink);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    expect(s.updates.map((u) => [u.taskId, u.state, u.isTerminal])).toEqual([
      ['a', TaskState.SUCCEEDED, true],
    ]);
    expect(events).toEqual(['attach a', 'detach a']);
    expect(s.ended()).toBe(0);
    expect(m.openStreams).toBe(0);
    // Still open: ids keep joining.
    snapshots.b = running('b');
    watch.attach(['b']);
    expect(events).toEqual(['attach a', 'detach a', 'attach b']);
    expect(m.openStreams).toBe(1);
  });

  it('an id that turned terminal (or vanished) before it was attached gets its terminal update at once', () => {
    const { host, events } = fakeHost({ done: done('done') });
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    m.attach(['done', 'gone'], s.sink);
    expect(s.updates.map((u) => [u.taskId, u.state, u.isTerminal, u.error])).toEqual([
      ['done', TaskState.SUCCEEDED, true, ''],
      ['gone', TaskState.UNSPECIFIED, true, NOT_FOUND_ERROR],
    ]);
    expect(events).toEqual([]);
  });

  it('close() detaches what is still pending, once, so the disconnect grace applies', () => {
    const { host, events } = fakeHost({ a: running('a'), b: running('b') });
    const m = new SubscriptionManager(host, () => 'w');
    const s = recordingSink();
    const watch = m.attach(['a', 'b'], s.sink);
    m.onTerminal('a', TaskState.SUCCEEDED, OK);
    watch.close();
    watch.close();
    watch.attach(['a']);
    m.onTerminal('b', TaskState.SUCCEEDED, OK);
    expect(events).toEqual(['attach a', 'attach b', 'detach a', 'detach b']);
    expect(s.updates).toHaveLength(1);
    expect(m.watchedTasks).toBe(0);
  });

  it('shares a task with WatchTasks streams: each subscription gets its own terminal update', () => {
    const { host, events } = fakeHost({ a: running('a') });
    const m = new SubscriptionManager(host, () => 'w');
    const stream = recordingSink();
    const watch = recordingSink();
    m.attach(['a'], stream.sink);
    m.watch(['a'], watch.sink);
    m.onTerminal('a', TaskState.FAILED, OK);
    expect(stream.updates.filter((u) => u.isTerminal)).toHaveLength(1);
    expect(watch.updates.filter((u) => u.isTerminal)).toHaveLength(1);
    expect(watch.ended()).toBe(1);
    expect(events).toEqual(['attach a', 'attach a', 'detach a', 'detach a']);
  });
});
