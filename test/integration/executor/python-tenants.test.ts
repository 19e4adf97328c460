// Tenants on a real Python executor (docs/executor.md § Tenants on threads, docs/security.md § Task
// isolation): calls of two tenants sent interleaved to one execution process never run on it at the
// same time, and with isolation task a process never serves a second tenant (a fresh fork takes it);
// with isolation none the drained process switches. The same calls without a tenant do interleave, so
// the overlap check sees it when it happens.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ExecutorHarness, Terminal } from './executor-harness.js';
import { overlaps, submittersPerPlace, type CallSpan } from '../../support/call-spans.js';
import { SnapshotEpochs, pythonHarness } from './python-executor-harness.js';

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const dir = mkdtempSync(join(tmpdir(), 'bx-py-tenants-'));
// CLOCK_MONOTONIC is one clock for every process of the host, so spans of two processes compare. A
// process is told by its pid as /proc names it: in a PID namespace of its own each one's getpid() is 2.
writeFileSync(
  join(dir, 'span.py'),
  'import asyncio\nimport os\nimport time\n\n\nasync def main(ctx, ms):\n' +
    '    start = time.monotonic()\n    await asyncio.sleep(ms / 1000)\n' +
    '    return {"where": os.readlink("/proc/self"), "start": start, "end": time.monotonic()}\n',
);
// What a hostile function did in the probe: patch the executor so later results are forged.
writeFileSync(
  join(dir, 'forge.py'),
  'from blockx_executor import unit\n\n\ndef main(ctx):\n    real = unit.completed_frame\n' +
    '    unit.completed_frame = lambda call_id, attempt, value, ms, max_bytes: real(call_id, attempt, "FORGED", ms, max_bytes)\n' +
    '    return "patched"\n',
);
const epochs = new SnapshotEpochs();
const epoch = epochs.take(dir);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Calls of `who` (in that order, all sent at once), each sleeping `ms`; `tenant` sets the frame's tenant. */
async function spans(
  h: ExecutorHarness,
  who: readonly string[],
  tenant: boolean,
  ms = 150,
): Promise<CallSpan[]> {
  const runs = who.map((w, i) =>
    h.run({
      function: 'span',
      codeEpoch: epoch,
      taskId: `task-${w}-${i}`,
      args: [ms],
      ...(tenant ? { tenant: `tenant-${w}` } : {}),
    }),
  );
  const ends: Terminal[] = await Promise.all(runs);
  return ends.map((e, i) => {
    expect(e.type, JSON.stringify(e)).toBe('callCompleted');
    const v = (e as Extract<Terminal, { type: 'callCompleted' }>).value as Omit<CallSpan, 'who'>;
    return { who: who[i]!, ...v };
  });
}

/** How many tenants each process served. */
const tenantsPerProcess = (all: readonly CallSpan[]): number[] => [...submittersPerPlace(all).values()];

const ALTERNATING = ['alice', 'bob', 'alice', 'bob', 'alice', 'bob'];

async function withHarness(
  options: { threads: number; isolation: 'task' | 'none' },
  fn: (h: ExecutorHarness) => Promise<void>,
): Promise<void> {
  const h = await pythonHarness({ functionsDir: dir, epochs, ...options }).start();
  try {
    await fn(h);
  } finally {
    await h.stop();
  }
}

describe('python executor: tenants on execution processes', () => {
  it('isolation task, one process: two tenants never share it at once nor in its life; one tenant’s calls do', async () => {
    await withHarness({ threads: 1, isolation: 'task' }, async (h) => {
      const all = await spans(h, ALTERNATING, true);
      const o = overlaps(all);
      expect(o.cross).toBe(0);
      expect(o.same).toBeGreaterThan(0); // the process ran calls at once: the rule, not chance, kept them apart
      expect(tenantsPerProcess(all)).toEqual(tenantsPerProcess(all).map(() => 1));
      expect(tenantsPerProcess(all).length).toBeGreaterThanOrEqual(2);
    });
  });

  it('without a tenant on the frames the same calls interleave on the process', async () => {
    await withHarness({ threads: 1, isolation: 'task' }, async (h) => {
      expect(overlaps(await spans(h, ALTERNATING, false)).cross).toBeGreaterThan(0);
    });
  });

  it('isolation task, two processes: never two tenants on a process, at once or in its life', async () => {
    await withHarness({ threads: 2, isolation: 'task' }, async (h) => {
      const all = await spans(h, ALTERNATING, true);
      expect(overlaps(all).cross).toBe(0);
      expect(tenantsPerProcess(all)).toEqual(tenantsPerProcess(all).map(() => 1));
    });
  });

  it('isolation none, one process: the drained process takes the other tenant itself', async () => {
    await withHarness({ threads: 1, isolation: 'none' }, async (h) => {
      const all = await spans(h, ALTERNATING, true);
      expect(overlaps(all).cross).toBe(0);
      expect(new Set(all.map((s) => s.where)).size).toBe(1);
    });
  });

  it.each([
    { isolation: 'task' as const, alice: 'her own result' },
    { isolation: 'none' as const, alice: 'FORGED' },
  ])(
    'isolation $isolation: after mallory patched the process, alice gets $alice',
    async ({ isolation, alice }) => {
      await withHarness({ threads: 1, isolation }, async (h) => {
        const patched = await h.run({
          function: 'forge',
          codeEpoch: epoch,
          taskId: 'm',
          tenant: 'tenant-mallory',
        });
        expect(patched.type).toBe('callCompleted');
        const after = await h.run({
          function: 'span',
          codeEpoch: epoch,
          taskId: 'a',
          args: [0],
          tenant: 'tenant-alice',
        });
        expect(after.type).toBe('callCompleted');
        const value = (after as Extract<Terminal, { type: 'callCompleted' }>).value;
        if (alice === 'FORGED') expect(value).toBe('FORGED');
        else expect(value).toMatchObject({ where: expect.any(String) });
      });
    },
  );

  it('a tenant of 129 characters makes the call malformed: ignored, and the executor keeps serving', async () => {
    await withHarness({ threads: 1, isolation: 'task' }, async (h) => {
      h.link.executeCall({
        function: 'span',
        codeEpoch: epoch,
        taskId: 't-long',
        callId: 'long-tenant',
        attempt: 1,
        args: [0],
        budgetMs: 5_000,
        tenant: 'x'.repeat(129),
      });
      const [ok] = await spans(h, ['alice'], true, 0);
      expect(ok!.who).toBe('alice');
      await h.until(() => h.logs.some((l) => l.includes('tenant must be a string of 1 to 128 characters')));
      expect(h.events.some((e) => 'callId' in e && e.callId === 'long-tenant')).toBe(false);
    });
  });
});
