// Bounds on client-supplied identifiers and on the text we echo back (docs/security.md § Input bounds).
//
// Why they exist: a gRPC status message travels in the `grpc-message` trailer. grpc-js never sends a
// trailer block above the HTTP/2 header-block limit (~64 KiB), so echoing a huge task id in a status
// left the call, and every later call on that connection, hanging to its deadline. Ids are therefore
// bounded where requests enter the cores, and every status message is cut before it is sent.
//
// Pure (no IO, no Buffer): the worker and coordinator cores use it, as do the gRPC adapters.

/** Longest accepted task id / slot id, in UTF-8 bytes. Ids BlockX generates are < 64 bytes. */
export const MAX_ID_BYTES = 256;

/** Longest status message (`grpc-message`) a server sends, in UTF-8 bytes, before the ellipsis. */
export const MAX_STATUS_MESSAGE_BYTES = 4096;

/**
 * Most tasks one batched call may carry: the ids of a RequestTaskSlots request, the submissions of one
 * RunTasksRequest message (docs/batched-protocol.md). Each costs the receiving core a synchronous step,
 * so an unbounded batch would stall the event loop the way an unbounded WatchTasks did.
 */
export const MAX_BATCH_TASKS = 10_000;

/**
 * Deepest nesting of arrays and objects accepted in a JSON text a client sends: a task's builder and
 * writer configs (function arguments included). Checked before parsing, by `jsonDepthProblem`
 * (src/kernel/json-depth.ts): later stages (schema validation, JSON.stringify, deep freeze) recurse.
 */
export const MAX_JSON_DEPTH = 128;

/** How much of an over-long id a log line or error message shows, in UTF-8 bytes. */
export const ID_PREVIEW_BYTES = 64;

const ELLIPSIS = '…';

/** UTF-8 length of `s`; stops counting once it exceeds `limit` (so a 1 MiB string costs O(limit)). */
export function utf8ByteLength(s: string, limit = Number.POSITIVE_INFINITY): number {
  let bytes = 0;
  for (let i = 0; i < s.length && bytes <= limit; i++) {
    const unit = s.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < s.length) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * `s` when it fits in `maxBytes` of UTF-8, otherwise its longest prefix that fits (never splitting a
 * surrogate pair) followed by "…". The cut text, ellipsis included, stays within `maxBytes + 3`.
 */
export function cutText(s: string, maxBytes: number): string {
  if (s.length <= maxBytes / 3 || utf8ByteLength(s, maxBytes) <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  while (end < s.length) {
    const unit = s.charCodeAt(end);
    const pair = unit >= 0xd800 && unit <= 0xdbff && end + 1 < s.length;
    const size = unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += pair ? 2 : 1;
  }
  return s.slice(0, end) + ELLIPSIS;
}

/** An id safe to put in a log line or an error message: cut to `ID_PREVIEW_BYTES` when over-long. */
export function idPreview(id: unknown): string {
  return typeof id === 'string' ? cutText(id, ID_PREVIEW_BYTES) : String(id);
}

/** Why `id` is not an acceptable task/slot id (empty, non-string, over `MAX_ID_BYTES`), or undefined. */
export function idProblem(id: unknown): string | undefined {
  if (typeof id !== 'string' || id === '') return 'must be a non-empty string';
  const bytes = utf8ByteLength(id, MAX_ID_BYTES);
  if (bytes > MAX_ID_BYTES) return `must be at most ${MAX_ID_BYTES} bytes (UTF-8)`;
  return undefined;
}
