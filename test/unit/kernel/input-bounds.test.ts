// The shared pieces of docs/security.md § Input bounds: UTF-8 length, cutting text for a status message
// or a log line, and the task/slot id rule.
import { describe, expect, it } from 'vitest';
import {
  MAX_ID_BYTES,
  MAX_STATUS_MESSAGE_BYTES,
  cutText,
  idPreview,
  idProblem,
  utf8ByteLength,
} from '../../../src/kernel/input-bounds.js';

describe('utf8ByteLength', () => {
  it.each([
    ['empty', '', 1_000, 0],
    ['ASCII', 'abc', 1_000, 3],
    ['2-byte', 'é', 1_000, 2],
    ['3-byte', '€', 1_000, 3],
    ['4-byte (surrogate pair)', '😀', 1_000, 4],
    ['lone high surrogate', '\ud800', 1_000, 3],
    ['lone low surrogate', '\udc00x', 1_000, 4],
    ['mixed', 'a€😀', 1_000, 8],
  ])('%s', (_name, s, limit, bytes) => {
    expect(utf8ByteLength(s, limit)).toBe(bytes);
    expect(utf8ByteLength(s)).toBe(Buffer.byteLength(s));
  });

  it('stops counting just past the limit', () => {
    const n = utf8ByteLength('x'.repeat(1024 * 1024), 10);
    expect(n).toBeGreaterThan(10);
    expect(n).toBeLessThanOrEqual(14);
  });
});

describe('cutText', () => {
  it.each([
    ['fits', 'hello', 5, 'hello'],
    ['one over', 'hello!', 5, 'hello…'],
    ['never splits a 3-byte character', '€€€', 7, '€€…'],
    ['never splits a surrogate pair', 'a😀b', 4, 'a…'],
    ['zero budget', 'abc', 0, '…'],
  ])('%s', (_name, s, max, expected) => {
    expect(cutText(s, max)).toBe(expected);
  });

  it('cuts a 1 MiB message to MAX_STATUS_MESSAGE_BYTES plus the ellipsis', () => {
    const cut = cutText('€'.repeat(1024 * 1024), MAX_STATUS_MESSAGE_BYTES);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES + 3);
    expect(cut.endsWith('…')).toBe(true);
  });
});

describe('idProblem', () => {
  it.each([
    ['a uuid', '3f2b1c9e-8a4d-4c1e-9b0a-6f7e5d4c3b2a', undefined],
    ['exactly MAX_ID_BYTES', 'x'.repeat(MAX_ID_BYTES), undefined],
    ['one byte over', 'x'.repeat(MAX_ID_BYTES + 1), `must be at most ${MAX_ID_BYTES} bytes (UTF-8)`],
    ['over in bytes, not in characters', '€'.repeat(86), `must be at most ${MAX_ID_BYTES} bytes (UTF-8)`],
    ['empty', '', 'must be a non-empty string'],
    ['not a string', 42, 'must be a non-empty string'],
  ])('%s', (_name, id, problem) => {
    expect(idProblem(id)).toBe(problem);
  });

  it('idPreview keeps short ids whole and cuts long ones', () => {
    expect(idPreview('task-1')).toBe('task-1');
    expect(idPreview('x'.repeat(1024 * 1024)).length).toBeLessThan(70);
    expect(idPreview(undefined)).toBe('undefined');
  });
});
