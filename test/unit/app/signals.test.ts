import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { onTermination, terminationSignal, type SignalSource } from '../../../src/app/signals.js';

describe('signals', () => {
  it('terminationSignal resolves with the first signal and removes its listeners', async () => {
    const source = new EventEmitter();
    const first = terminationSignal(source as unknown as SignalSource);
    source.emit('SIGINT');
    source.emit('SIGTERM');
    expect(await first).toBe('SIGINT');
    expect(source.listenerCount('SIGINT') + source.listenerCount('SIGTERM')).toBe(0);
  });

  it('onTermination sees every signal until removed', () => {
    const source = new EventEmitter();
    const seen: string[] = [];
    const off = onTermination((s) => void seen.push(s), source as unknown as SignalSource);
    source.emit('SIGTERM');
    source.emit('SIGINT');
    off();
    source.emit('SIGTERM');
    expect(seen).toEqual(['SIGTERM', 'SIGINT']);
    expect(source.listenerCount('SIGTERM')).toBe(0);
  });
});
