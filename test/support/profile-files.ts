// Assertions on the files the profiling variables make (docs/performance.md § Profiling): a V8 CPU
// profile that sampled something, and Chrome trace-event JSON of one process.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string } }[];
  samples: number[];
  startTime: number;
  endTime: number;
}

export interface TraceFile {
  traceEvents: { name: string; ph: string; pid: number; ts: number }[];
}

/** The file parsed as a V8 CPU profile with samples, each naming one of its nodes. */
export function expectCpuProfile(file: string): CpuProfile {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  expect(profile.nodes.length).toBeGreaterThan(1);
  expect(profile.samples.length).toBeGreaterThan(0);
  const ids = new Set(profile.nodes.map((n) => n.id));
  expect(profile.samples.every((s) => ids.has(s))).toBe(true);
  expect(profile.endTime).toBeGreaterThan(profile.startTime);
  return profile;
}

/** The file parsed as Chrome trace-event JSON of process `pid`, with timed events among them. */
export function expectTrace(file: string, pid: number): TraceFile {
  const trace = JSON.parse(readFileSync(file, 'utf8')) as TraceFile;
  expect(trace.traceEvents.length).toBeGreaterThan(0);
  for (const e of trace.traceEvents.slice(0, 50)) {
    expect(typeof e.name).toBe('string');
    expect(typeof e.ph).toBe('string');
    expect(e.pid).toBe(pid);
  }
  expect(trace.traceEvents.some((e) => e.ph !== 'M' && typeof e.ts === 'number')).toBe(true);
  return trace;
}
