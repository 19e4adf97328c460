import { describe, expect, it } from 'vitest';
import {
  RSS_COOLDOWN_MS,
  judgeMemory,
  type MemoryLimits,
  type ThreadMemorySample,
} from '../../../src/executor/memory-watch.js';

const limits: MemoryLimits = { threadHeapMb: 1024, threadMemoryMb: 1000, maxRssMb: 3000 };
const t = (index: number, memoryMb: number, stuck = false): ThreadMemorySample => ({
  index,
  memoryMb,
  stuck,
});

describe('judgeMemory', () => {
  it.each<{
    name: string;
    samples: ThreadMemorySample[];
    rssMb: number;
    limits?: MemoryLimits;
    lastRssKillAt?: number;
    kills: number[];
    forRss?: boolean;
  }>([
    { name: 'all under', samples: [t(0, 100), t(1, 999)], rssMb: 1500, kills: [] },
    { name: 'exactly at the thread bound is fine', samples: [t(0, 1000)], rssMb: 1500, kills: [] },
    { name: 'one thread over its bound', samples: [t(0, 100), t(1, 1001)], rssMb: 1500, kills: [1] },
    { name: 'every thread over its bound', samples: [t(0, 4096), t(1, 2000)], rssMb: 7000, kills: [0, 1] },
    {
      name: 'thread bound off (0)',
      samples: [t(0, 5000)],
      rssMb: 100,
      limits: { ...limits, threadMemoryMb: 0 },
      kills: [],
    },
    {
      name: 'RSS over: the thread holding the most',
      samples: [t(0, 900), t(1, 950)],
      rssMb: 3001,
      kills: [1],
      forRss: true,
    },
    {
      name: 'RSS over: a stuck thread first (its figure is stale)',
      samples: [t(0, 10, true), t(1, 950)],
      rssMb: 3500,
      kills: [0],
      forRss: true,
    },
    {
      name: 'RSS over: the largest of the stuck ones',
      samples: [t(0, 10, true), t(1, 950), t(2, 20, true)],
      rssMb: 3500,
      kills: [2],
      forRss: true,
    },
    {
      name: 'RSS over within the cooldown: nothing',
      samples: [t(0, 900)],
      rssMb: 3500,
      lastRssKillAt: 10_000 - RSS_COOLDOWN_MS + 1,
      kills: [],
    },
    {
      name: 'RSS over after the cooldown',
      samples: [t(0, 900)],
      rssMb: 3500,
      lastRssKillAt: 10_000 - RSS_COOLDOWN_MS,
      kills: [0],
      forRss: true,
    },
    {
      name: 'RSS bound off (0)',
      samples: [t(0, 900)],
      rssMb: 9999,
      limits: { ...limits, maxRssMb: 0 },
      kills: [],
    },
    { name: 'RSS over, no thread to blame', samples: [], rssMb: 9999, kills: [] },
  ])('$name', ({ samples, rssMb, limits: l, lastRssKillAt, kills, forRss }) => {
    const out = judgeMemory(samples, rssMb, l ?? limits, 10_000, lastRssKillAt);
    expect(out.map((k) => k.index)).toEqual(kills);
    for (const k of out) {
      expect(k.forRss).toBe(forRss ?? false);
      expect(k.reason).toMatch(forRss ? /executor\.maxRssMb \(3000\)/ : /executor\.threadMemoryMb \(1000\)/);
    }
  });
});
