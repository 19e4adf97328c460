import { describe, expect, it } from 'vitest';
import {
  ExecutorErrorCode,
  FrameTooLargeError,
  SocketPathInUseError,
  SocketPathTooLongError,
} from '../../../src/executor/errors.js';
import { BlockxError } from '../../../src/kernel/errors.js';

describe('executor error codes', () => {
  it('each key equals its code, so codes never drift', () => {
    for (const [key, code] of Object.entries(ExecutorErrorCode)) expect(code).toBe(key);
  });

  it('errors are BlockxErrors with structured fields', () => {
    const tooLarge = new FrameTooLargeError(10, 5, 'encode');
    expect(tooLarge).toBeInstanceOf(BlockxError);
    expect(tooLarge).toMatchObject({
      code: 'FRAME_TOO_LARGE',
      bytes: 10,
      maxBytes: 5,
      name: 'FrameTooLargeError',
    });
    expect(new SocketPathTooLongError('/x', 120, 107)).toMatchObject({
      code: 'SOCKET_PATH_TOO_LONG',
      bytes: 120,
    });
    expect(new SocketPathInUseError('/x', 'live-listener').message).toContain('in use by a live process');
  });
});
