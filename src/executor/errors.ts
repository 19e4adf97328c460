// Stable error codes of the executor package: frame codec, socket paths, function code view and loader.
// Each key equals its value; test/unit/executor/errors.test.ts pins that, so a code never drifts.
// Errors carry structured fields; the message is for people, the fields are for programs.

import { BlockxError } from '../kernel/errors.js';

export const ExecutorErrorCode = {
  FRAME_TOO_LARGE: 'FRAME_TOO_LARGE',
  FRAME_INVALID: 'FRAME_INVALID',
  SOCKET_PATH_TOO_LONG: 'SOCKET_PATH_TOO_LONG',
  SOCKET_PATH_IN_USE: 'SOCKET_PATH_IN_USE',
  EPOCH_UNKNOWN: 'EPOCH_UNKNOWN',
  FUNCTION_NOT_FOUND: 'FUNCTION_NOT_FOUND',
  FUNCTION_LOAD_FAILED: 'FUNCTION_LOAD_FAILED',
  FUNCTIONS_DIR_UNREADABLE: 'FUNCTIONS_DIR_UNREADABLE',
  CALL_ALREADY_IN_FLIGHT: 'CALL_ALREADY_IN_FLIGHT',
  EXECUTOR_NOT_RUNNING: 'EXECUTOR_NOT_RUNNING',
  /** An execution thread went over a memory bound and was terminated (memory-watch.ts). */
  EXECUTOR_MEMORY_LIMIT: 'EXECUTOR_MEMORY_LIMIT',
} as const;
export type ExecutorErrorCode = (typeof ExecutorErrorCode)[keyof typeof ExecutorErrorCode];

/** A frame's declared or encoded length exceeds the configured maximum. */
export class FrameTooLargeError extends BlockxError {
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(bytes: number, maxBytes: number, direction: 'encode' | 'decode') {
    super(
      ExecutorErrorCode.FRAME_TOO_LARGE,
      `${direction === 'encode' ? 'cannot send' : 'received'} a frame of ${bytes} bytes; the maximum is ${maxBytes} bytes`,
    );
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** A frame's payload is not a JSON object with a string `type`. */
export class FrameInvalidError extends BlockxError {
  constructor(detail: string, options?: { cause?: unknown }) {
    super(ExecutorErrorCode.FRAME_INVALID, `invalid frame: ${detail}`, options);
  }
}

/** Linux silently truncates `sun_path` beyond 107 bytes (+ NUL), so a longer path is refused up front. */
export class SocketPathTooLongError extends BlockxError {
  readonly path: string;
  readonly bytes: number;
  readonly maxBytes: number;
  constructor(path: string, bytes: number, maxBytes: number) {
    super(
      ExecutorErrorCode.SOCKET_PATH_TOO_LONG,
      `unix socket path is ${bytes} bytes, longer than the ${maxBytes}-byte limit (it would be truncated): ${path}`,
    );
    this.path = path;
    this.bytes = bytes;
    this.maxBytes = maxBytes;
  }
}

/** The socket path is taken: a live listener answers there, or it is not a socket at all. */
export class SocketPathInUseError extends BlockxError {
  readonly path: string;
  readonly reason: 'live-listener' | 'not-a-socket';
  constructor(path: string, reason: 'live-listener' | 'not-a-socket') {
    super(
      ExecutorErrorCode.SOCKET_PATH_IN_USE,
      reason === 'live-listener'
        ? `unix socket ${path} is in use by a live process; refusing to take it over`
        : `${path} exists and is not a unix socket; refusing to delete it`,
    );
    this.path = path;
    this.reason = reason;
  }
}

/** An epoch id that the code view does not hold (never seen, or already retired). */
export class EpochUnknownError extends BlockxError {
  readonly epoch: string;
  constructor(epoch: string, detail = 'it was never created or has been retired') {
    super(ExecutorErrorCode.EPOCH_UNKNOWN, `unknown code epoch ${epoch}: ${detail}`);
    this.epoch = epoch;
  }
}

/** The functions directory cannot be listed. */
export class FunctionsDirError extends BlockxError {
  readonly dir: string;
  constructor(dir: string, options?: { cause?: unknown }) {
    super(
      ExecutorErrorCode.FUNCTIONS_DIR_UNREADABLE,
      `cannot read functions directory ${dir}: ${(options?.cause as Error | undefined)?.message ?? 'unknown error'}`,
      options,
    );
    this.dir = dir;
  }
}

/** `executeCall` for a (callId, attempt) that is already queued or in flight: a caller bug. */
export class CallAlreadyInFlightError extends BlockxError {
  readonly callId: string;
  readonly attempt: number;
  constructor(callId: string, attempt: number) {
    super(ExecutorErrorCode.CALL_ALREADY_IN_FLIGHT, `call ${callId} attempt ${attempt} is already in flight`);
    this.callId = callId;
    this.attempt = attempt;
  }
}
