// Length-prefixed frames: a 4-byte big-endian payload length, then that many bytes of UTF-8 JSON.
//
// The decoder is incremental: a socket hands it chunks cut anywhere (a header split in two, many frames
// coalesced in one chunk, one frame spread over many). It buffers chunks without copying until the next
// frame is complete, so a large frame arriving in small pieces costs one concatenation, not one per piece.
//
// The writer batches: frames sent during one turn of the event loop are joined into a single buffer and
// written with one `write` at `setImmediate`, so 1,024 results produced together cost one syscall.
//
// A frame may carry an attachment (docs/executor.md § Arguments as bytes): the length word's top bit is
// set, and the payload is a 4-byte big-endian JSON length, the JSON, then the attachment's bytes, which
// the JSON points into (`argsAt: [offset, length]`). Only a Worker sends them, only to an executor that
// announced ArgsBytes, and only a decoder made with `attachments: true` takes them.

import { FrameInvalidError, FrameTooLargeError } from './errors.js';
import type { CallsCompletedMessage, CompletedResult } from './protocol.js';

/**
 * Default cap on one frame's payload: the gRPC message limit (64 MiB, src/grpc/channel-options.ts) plus
 * 1 MiB for the frame's own fields, so a call whose arguments arrived in an accepted SubmitTask, or an
 * output the Worker may collect (`worker.maxCollectedOutputBytes`, 64 MiB), always fits one frame
 * (docs/security.md § Input bounds).
 */
export const DEFAULT_MAX_FRAME_BYTES = 65 * 1024 * 1024;
const HEADER_BYTES = 4;
/** The length word's flag of a frame with an attachment (frames are far below 2^31 bytes). */
const ATTACHED = 0x8000_0000;

/** A frame as the decoder hands it over: its JSON text, and the bytes attached to it if any. */
export type RawFrame = string | AttachedFrame;

/** A frame with an attachment: its JSON text and the attachment (a view of the frame's buffer). */
export interface AttachedFrame {
  readonly json: string;
  readonly attachment: Buffer;
}

/** Encode one already-serialised JSON payload as a frame. Throws FrameTooLargeError above `maxBytes`. */
export function encodeJsonFrame(json: string, maxBytes = DEFAULT_MAX_FRAME_BYTES): Buffer {
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) throw new FrameTooLargeError(bytes, maxBytes, 'encode');
  const frame = Buffer.allocUnsafe(HEADER_BYTES + bytes);
  frame.writeUInt32BE(bytes, 0);
  frame.write(json, HEADER_BYTES, 'utf8');
  return frame;
}

/** Encode one message as a frame. */
export function encodeFrame(message: object, maxBytes = DEFAULT_MAX_FRAME_BYTES): Buffer {
  return encodeJsonFrame(JSON.stringify(message), maxBytes);
}

/** Turns a stream of chunks into messages. After it throws, the stream is corrupt: close the connection. */
export class FrameDecoder<T = unknown> {
  private readonly maxBytes: number;
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes needed before another frame can complete: a header, or a header plus its known payload. */
  private needed = HEADER_BYTES;

  private readonly attachments: boolean;

  /** `attachments`: frames with an attachment are taken (pushFrames); without, they are invalid. */
  constructor(options: { maxFrameBytes?: number; attachments?: boolean } = {}) {
    this.maxBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.attachments = options.attachments === true;
  }

  /** Bytes held for an incomplete frame. */
  get pendingBytes(): number {
    return this.buffered;
  }

  /** Feed one chunk; returns the messages it completed, in order. */
  push(chunk: Uint8Array): T[] {
    const raw = this.pushRaw(chunk);
    const out: T[] = new Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = parseMessage<T>(raw[i]!);
    return out;
  }

  /**
   * Feed one chunk; returns the JSON text of each frame it completed, unparsed (for a router that
   * forwards the text and parses it with `parseMessage`). A frame with an attachment is invalid here.
   */
  pushRaw(chunk: Uint8Array): string[] {
    const frames = this.pushFrames(chunk);
    for (const f of frames)
      if (typeof f !== 'string') throw new FrameInvalidError('a frame with an attachment was not expected');
    return frames as string[];
  }

  /** Feed one chunk; returns each frame it completed: its JSON text, or text and attachment. */
  pushFrames(chunk: Uint8Array): RawFrame[] {
    if (chunk.length === 0) return [];
    this.chunks.push(
      Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length),
    );
    this.buffered += chunk.length;
    if (this.buffered < this.needed) return [];

    const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    const out: RawFrame[] = [];
    let offset = 0;
    this.needed = HEADER_BYTES;
    while (buf.length - offset >= HEADER_BYTES) {
      const word = buf.readUInt32BE(offset);
      const attached = (word & ATTACHED) !== 0;
      const length = attached ? word - ATTACHED : word;
      if (attached && !this.attachments)
        throw new FrameInvalidError('a frame with an attachment was not expected');
      if (length > this.maxBytes) throw new FrameTooLargeError(length, this.maxBytes, 'decode');
      if (buf.length - offset - HEADER_BYTES < length) {
        this.needed = HEADER_BYTES + length;
        break;
      }
      const start = offset + HEADER_BYTES;
      out.push(attached ? attachedFrame(buf, start, length) : buf.toString('utf8', start, start + length));
      offset = start + length;
    }
    const rest = buf.length - offset;
    this.chunks = rest === 0 ? [] : [buf.subarray(offset)];
    this.buffered = rest;
    return out;
  }
}

/** The JSON and attachment of a frame with one whose payload is `buf[start, start + length)`. */
function attachedFrame(buf: Buffer, start: number, length: number): AttachedFrame {
  if (length < HEADER_BYTES) throw new FrameInvalidError('a frame with an attachment has no JSON length');
  const jsonBytes = buf.readUInt32BE(start);
  if (jsonBytes > length - HEADER_BYTES)
    throw new FrameInvalidError(`a JSON length of ${jsonBytes} overruns its frame of ${length} bytes`);
  const jsonStart = start + HEADER_BYTES;
  return {
    json: buf.toString('utf8', jsonStart, jsonStart + jsonBytes),
    attachment: buf.subarray(jsonStart + jsonBytes, start + length),
  };
}

/** Parse one frame's JSON text: a JSON object with a string `type`, or FrameInvalidError. */
export function parseMessage<T = unknown>(json: string): T {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    throw new FrameInvalidError(`payload is not JSON (${(err as Error).message})`, { cause: err });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FrameInvalidError('payload is not a JSON object');
  }
  if (typeof (value as { type?: unknown }).type !== 'string') {
    throw new FrameInvalidError('payload has no string "type"');
  }
  return value as T;
}

/** A queued frame with an attachment (FrameWriter.sendAttached). */
interface AttachedParts {
  readonly json: string;
  readonly jsonBytes: number;
  readonly pieces: readonly Uint8Array[];
}

/** Where a writer puts joined frames; a `net.Socket` fits. */
export interface FrameSink {
  write(chunk: Buffer): boolean;
}

/**
 * Queues frames and writes them together once per event-loop turn. `send` throws FrameTooLargeError
 * synchronously for an oversized frame, so the caller can answer with an error frame instead.
 */
export class FrameWriter {
  private readonly sink: FrameSink;
  private readonly maxBytes: number;
  private parts: (string | AttachedParts)[] = [];
  private lengths: number[] = [];
  private bytes = 0;
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  /** Frames someone holds open until the flush (ExecuteCalls, adapters/frames-as-text.ts). */
  private deferred: (() => void) | undefined;

  constructor(sink: FrameSink, options: { maxFrameBytes?: number } = {}) {
    this.sink = sink;
    this.maxBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  }

  get maxFrameBytes(): number {
    return this.maxBytes;
  }

  send(message: object): void {
    this.sendJson(JSON.stringify(message));
  }

  /** Queue a payload that is already JSON text (e.g. serialised on a worker thread). */
  sendJson(json: string): void {
    if (this.closed) return;
    const length = Buffer.byteLength(json);
    if (length > this.maxBytes) throw new FrameTooLargeError(length, this.maxBytes, 'encode');
    this.parts.push(json);
    this.lengths.push(length);
    this.bytes += HEADER_BYTES + length;
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /**
   * Queue a frame with an attachment: `json` (whose `argsAt` point into it) and the attachment as byte
   * pieces, `pieceBytes` in all; each piece is copied once, into the written buffer.
   */
  sendAttached(json: string, pieces: readonly Uint8Array[], pieceBytes: number): void {
    if (this.closed) return;
    const jsonBytes = Buffer.byteLength(json);
    const length = HEADER_BYTES + jsonBytes + pieceBytes;
    if (length > this.maxBytes) throw new FrameTooLargeError(length, this.maxBytes, 'encode');
    this.parts.push({ json, jsonBytes, pieces });
    this.lengths.push(length);
    this.bytes += HEADER_BYTES + length;
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /**
   * Have `producer` queue its frames at the start of the next flush (it may queue them earlier itself;
   * one producer at a time, the latest wins), and schedule that flush.
   */
  defer(producer: () => void): void {
    if (this.closed) return;
    this.deferred = producer;
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Write everything queued now. */
  flush(): void {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
    const deferred = this.deferred;
    this.deferred = undefined;
    deferred?.();
    if (this.scheduled) {
      clearImmediate(this.scheduled); // the producer's frames go out with this flush
      this.scheduled = undefined;
    }
    if (this.parts.length === 0 || this.closed) return;
    const buf = Buffer.allocUnsafe(this.bytes);
    let offset = 0;
    for (let i = 0; i < this.parts.length; i++) {
      const length = this.lengths[i]!;
      const part = this.parts[i]!;
      if (typeof part === 'string') {
        buf.writeUInt32BE(length, offset);
        buf.write(part, offset + HEADER_BYTES, length, 'utf8');
      } else {
        buf.writeUInt32BE((length | ATTACHED) >>> 0, offset);
        buf.writeUInt32BE(part.jsonBytes, offset + HEADER_BYTES);
        let at = offset + 2 * HEADER_BYTES;
        at += buf.write(part.json, at, part.jsonBytes, 'utf8');
        for (const p of part.pieces) {
          buf.set(p, at);
          at += p.length;
        }
      }
      offset += HEADER_BYTES + length;
    }
    this.parts = [];
    this.lengths = [];
    this.bytes = 0;
    this.sink.write(buf);
  }

  /** Drop anything queued and refuse further frames (the connection is gone). */
  close(): void {
    this.closed = true;
    this.deferred = undefined;
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.parts = [];
    this.lengths = [];
    this.bytes = 0;
  }
}

// ---- CallsCompleted (docs/executor.md § Calls in bulk) --------------------------------------------------

/**
 * The JSON of one CallsCompleted entry: what the attempt's CallCompleted says, without its `type`.
 * Throws what JSON.stringify throws for a value that is not JSON (the caller turns that into a failure).
 */
export function completedResultJson(
  callId: string,
  attempt: number,
  value: unknown,
  durationMs: number,
  ioHits: number,
): string {
  return JSON.stringify(
    ioHits > 0 ? { callId, attempt, value, durationMs, ioHits } : { callId, attempt, value, durationMs },
  );
}

/**
 * The frames that carry `entries` (completedResultJson texts) of task `taskId`: one CallsCompleted, or
 * more when they would not fit one frame of `maxBytes`; an entry too large for a CallsCompleted of its
 * own goes as the CallCompleted frame it stands for (which its thread already checked against the limit).
 */
export function callsCompletedFrames(taskId: string, entries: readonly string[], maxBytes: number): string[] {
  const head = `{"type":"CallsCompleted","taskId":${JSON.stringify(taskId)},"results":[`;
  const envelope = Buffer.byteLength(head) + 2; // `]}`
  const frames: string[] = [];
  let open: string[] = [];
  let openBytes = envelope;
  const close = (): void => {
    if (open.length > 0) frames.push(`${head}${open.join(',')}]}`);
    open = [];
    openBytes = envelope;
  };
  for (const entry of entries) {
    // What the entry may cost: UTF-8 is at most 3 bytes per UTF-16 unit, measured exactly only when that
    // bound alone would not fit. `openBytes` is never below the open frame's real size.
    let cost = entry.length * 3;
    if (envelope + cost > maxBytes) {
      cost = Buffer.byteLength(entry);
      if (envelope + cost > maxBytes) {
        close();
        frames.push(`{"type":"CallCompleted",${entry.slice(1)}`);
        continue;
      }
    }
    if (open.length > 0 && openBytes + 1 + cost > maxBytes) close();
    openBytes += (open.length > 0 ? 1 : 0) + cost;
    open.push(entry);
  }
  close();
  return frames;
}

/**
 * The well-formed entries of a CallsCompleted frame, for its receiver. A frame without a string `taskId`
 * or a `results` array is dropped whole; an entry without a non-empty `callId`, a positive integer
 * `attempt` and a finite `durationMs >= 0` (or with an `ioHits` that is not a whole number >= 0) drops
 * only itself. `malformed` hears each problem.
 */
export function completedResultsOf(
  m: CallsCompletedMessage,
  malformed: (problem: string) => void,
): CompletedResult[] {
  if (typeof m.taskId !== 'string') {
    malformed('taskId must be a string');
    return [];
  }
  if (!Array.isArray(m.results)) {
    malformed('results must be an array');
    return [];
  }
  const out: CompletedResult[] = [];
  for (const entry of m.results as readonly unknown[]) {
    const problem = completedResultProblem(entry);
    if (problem === undefined) out.push(entry as CompletedResult);
    else malformed(problem);
  }
  return out;
}

function completedResultProblem(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
    return 'a result must be an object';
  const e = entry as Record<string, unknown>;
  if (typeof e.callId !== 'string' || e.callId === '') return 'callId must be a non-empty string';
  if (!Number.isInteger(e.attempt) || (e.attempt as number) < 1) return 'attempt must be a positive integer';
  if (typeof e.durationMs !== 'number' || !Number.isFinite(e.durationMs) || e.durationMs < 0)
    return 'durationMs must be a finite number >= 0';
  if (e.ioHits !== undefined && (!Number.isInteger(e.ioHits) || (e.ioHits as number) < 0))
    return 'ioHits must be a whole number >= 0 when present';
  return undefined;
}
