// One registry per service instance, its default labels, and counters mirroring cumulative totals.
import { describe, expect, it } from 'vitest';
import { Counter, register as globalRegistry } from 'prom-client';
import {
  createServiceRegistry,
  cumulativeCounter,
  setServiceLabels,
} from '../../../../src/kernel/observability/service-registry.js';
import { sample } from './metric-values.js';

describe('createServiceRegistry', () => {
  it('labels every sample with service and deployment, and instance once known', async () => {
    const registry = createServiceRegistry({ service: 'worker', deployment: 'block' });
    new Counter({ name: 'c_total', help: 'c', registers: [registry] }).inc();
    expect(await registry.metrics()).toContain('c_total{service="worker",deployment="block"} 1');
    setServiceLabels(registry, { service: 'worker', deployment: 'block', instance: '10.0.0.1:9090' });
    expect(await registry.metrics()).toContain(
      'c_total{service="worker",deployment="block",instance="10.0.0.1:9090"} 1',
    );
  });

  it('never touches the global default registry, so two instances can hold the same names', () => {
    const before = globalRegistry.getMetricsAsArray().length;
    const a = createServiceRegistry({ service: 'worker', deployment: 'block', instance: 'a' });
    const b = createServiceRegistry({ service: 'worker', deployment: 'block', instance: 'b' });
    new Counter({ name: 'same_total', help: 's', registers: [a] });
    new Counter({ name: 'same_total', help: 's', registers: [b] });
    expect(globalRegistry.getMetricsAsArray().length).toBe(before);
    expect(() => new Counter({ name: 'same_total', help: 's', registers: [a] })).toThrow(
      /already been registered/,
    );
  });

  it('adds the process metrics only when asked', async () => {
    const plain = createServiceRegistry({ service: 'worker', deployment: 'block' });
    const withProcess = createServiceRegistry(
      { service: 'worker', deployment: 'block' },
      { processMetrics: true },
    );
    expect(await plain.metrics()).not.toContain('process_cpu_seconds_total');
    expect(await withProcess.metrics()).toContain('process_cpu_seconds_total');
  });
});

describe('cumulativeCounter', () => {
  it('adds the growth of the source at each scrape and never decreases', async () => {
    const registry = createServiceRegistry({ service: 's', deployment: 'd' });
    let total: number | undefined = 5;
    cumulativeCounter(registry, 'mirrored_total', 'm', () => total);
    expect(await sample(registry, 'mirrored_total')).toBe(5);
    total = 12;
    expect(await sample(registry, 'mirrored_total')).toBe(12);
    expect(await sample(registry, 'mirrored_total')).toBe(12); // no growth, no change
    total = 3; // the source was replaced and counts from 0 again: its 3 are new
    expect(await sample(registry, 'mirrored_total')).toBe(15);
    total = undefined; // no source: stays put
    expect(await sample(registry, 'mirrored_total')).toBe(15);
    total = Number.NaN;
    expect(await sample(registry, 'mirrored_total')).toBe(15);
    total = 4;
    expect(await sample(registry, 'mirrored_total')).toBe(16);
  });
});
