// The Worker's hot frames as text (docs/executor.md § Calls in bulk): what the link sends again and again
// is written as JSON text directly, each shared value serialised once.
//
// ExecuteCalls, on a connection whose executor announced it: the attempts the link sends during one
// event-loop turn that share their task-level fields (task, function, code epoch, budget, read-copy id,
// the same block: one object, or objects with the same JSON text) leave as one frame, those fields
// written once. The link core still decides per
// attempt (one `sendExecute` each, one terminal event each); only the encoding is shared. Order on the
// wire is kept: any other frame to the connection closes the open batch first (a CancelCall never
// overtakes the frame carrying its attempt, a DefineEpoch always precedes the batch naming its epoch),
// and the writer closes it at its flush at the latest. To an executor that announced CallsCompleted the
// frames ask for the successes in bulk (`bulkResults`), when the link takes them so.
//
// A call's arguments may come encoded (src/contracts/call-args.ts: rows a builder read with
// TaskIo.scanJson, whose JSON text the database wrote). To an executor that announced ArgsJson they go
// as that text, as the JSON string literal they already are (`argsJson`), untouched; to any other the
// text goes in place of the values (`args`), no value built on the Worker either way
// (docs/executor.md § Arguments as text).

import {
  argsLiteralOf,
  argsTextOf,
  isEncodedArgs,
  sizeOfPieces,
  type CallArgs,
} from '../../../contracts/call-args.js';
import { FrameTooLargeError } from '../../../executor/errors.js';
import type { FrameWriter } from '../../../executor/frame-codec.js';
import type { ExecuteCallCommand } from '../core/link/index.js';

// ---- Values serialised once ----
//
// JSON text of values the Worker sends to its Executor again and again: the block a builder attached to
// every call of a task, the cached row every call of a task reads. Serialising them once per object
// instead of once per frame matters at 10,000 calls per task.
//
// Only frozen objects are memoised: a frozen object cannot change after its text was taken, so the text
// is always right. The read cache freezes the rows it shares, and block builders freeze the block they
// attach to every call; anything else is serialised each time, as before.

const memo = new WeakMap<object, string>();

/** JSON.stringify(value), remembered per frozen object. Throws what JSON.stringify throws. */
export function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value))
    return JSON.stringify(value) ?? 'null';
  let text = memo.get(value);
  if (text === undefined) {
    text = JSON.stringify(value) ?? 'null';
    memo.set(value, text);
  }
  return text;
}

/**
 * ExecuteCall, the hottest line of the link: the block every call of a task shares is serialised once (jsonOf),
 * the rest per call. Same JSON as the ExecuteCall object.
 */
export function executeCallJson(c: ExecuteCallCommand): string {
  if (c.page !== undefined) throw new Error(NO_PAGES);
  const block = c.block === undefined || c.block === null ? '' : `,"block":${jsonOf(c.block)}`;
  return (
    `{"type":"ExecuteCall","taskId":${JSON.stringify(c.taskId)},"callId":${JSON.stringify(c.callId)}` +
    `,"attempt":${c.attempt},"function":${JSON.stringify(c.function)},"args":${argsTextOf(c.args)}` +
    `${block},"codeEpoch":${JSON.stringify(c.codeEpoch)},"budgetMs":${c.budgetMs}` +
    `${c.ioCache === undefined ? '' : `,"ioCache":${JSON.stringify(c.ioCache)}`}}`
  );
}

/** A successful ResumeCall: a cached row goes to every call that reads it, its text is taken once. */
export function resumeOkJson(callId: string, attempt: number, requestId: number, value: unknown): string {
  return (
    `{"type":"ResumeCall","callId":${JSON.stringify(callId)},"attempt":${attempt}` +
    `,"requestId":${requestId},"ok":true,"value":${jsonOf(value)}}`
  );
}

// ---- ExecuteCalls ----

/** Why a page cannot go to an executor that did not announce Pages (the dispatcher then splits it). */
const NO_PAGES = 'the executor does not take pages (it did not announce Pages)';

/** Bytes of `{"callId":…}` envelope an entry adds beyond its strings, and the frame's closing `]}`. */
const ENTRY_OVERHEAD = 64;

export class ExecuteCallsBatcher {
  /** The first attempt of the open batch: the one the others must match. */
  private first: ExecuteCallCommand | undefined;
  private head = '';
  private entries: string[] = [];
  /**
   * The open batch's size in bytes: an upper bound (3 bytes per UTF-16 unit) while that is below the
   * frame limit, so an entry's text is not scanned twice (the writer measures the frame once); exact
   * (`exact`) from the moment the bound reaches the limit.
   */
  private bytes = 0;
  private exact = false;
  /** The open batch's attachment (ArgsBytes): the argument bytes its entries point at, in order. */
  private attachment: Uint8Array[] = [];
  private attachBytes = 0;
  /** The open batch's block (its first attempt's) and that block's JSON text ('' without one). */
  private block: unknown = null;
  private blockText = '';
  /** The last block `sameBlock` compared, and its text. */
  private probed: unknown = null;
  private probedText = '';

  /**
   * `bulkResults`: the executor announced CallsCompleted and the Worker takes its successes in bulk;
   * every frame then asks for them (ExecuteCalls.bulkResults). `argsJson`: it announced ArgsJson, so
   * encoded arguments go as their text (an entry's `argsJson`). `tenants`: it announced Tenants; every
   * frame carries its task's tenant (ExecuteCalls.tenant). `pages`: it announced Pages (and ArgsJson),
   * so page attempts go as page entries (docs/executor.md § Pages); without it a page cannot be sent.
   * `argsBytes`: it announced ArgsBytes, so arguments made of rows read as bytes go in the frame's
   * attachment as those bytes (docs/executor.md § Arguments as bytes).
   */
  constructor(
    private readonly writer: FrameWriter,
    private readonly bulkResults = false,
    private readonly argsJson = false,
    private readonly tenants = false,
    private readonly pages = false,
    private readonly argsBytes = false,
  ) {}

  /**
   * Add an attempt to the open batch (opening one, or closing the open one first if its fields differ
   * or it would outgrow a frame). Throws what its arguments' JSON or its size throws: that attempt can
   * never be sent, and nothing was queued for it.
   */
  add(c: ExecuteCallCommand): void {
    let page = '';
    if (c.page !== undefined) {
      if (!this.pages || !this.argsJson) throw new Error(NO_PAGES);
      page = `,"page":${JSON.stringify(c.page)}`;
    }
    // Arguments as bytes go in the frame's attachment, the entry pointing at them (`argsAt`).
    const pieces = this.argsBytes && isEncodedArgs(c.args) ? c.args.bytes : undefined;
    const pieceBytes = pieces === undefined ? 0 : sizeOfPieces(pieces);
    const args = pieces === undefined ? this.argsField(c.args) : undefined;
    const head = `{"callId":${JSON.stringify(c.callId)},"attempt":${c.attempt},`;
    const entryAt = (offset: number): string =>
      `${head}${args ?? `"argsAt":[${offset},${pieceBytes}]`}${page}}`;
    const max = this.writer.maxFrameBytes;
    const first = this.first;
    if (first !== undefined && sameTaskFields(first, c) && this.sameBlock(c.block)) {
      const entry = entryAt(this.attachBytes);
      let entryBytes = (this.exact ? Buffer.byteLength(entry) + 1 : 3 * entry.length + 1) + pieceBytes;
      if (!this.exact && this.bytes + entryBytes > max) {
        // Near the limit: measure what the batch really holds before deciding to close it.
        this.bytes = Buffer.byteLength(this.head) + ENTRY_OVERHEAD + this.attachBytes;
        for (const e of this.entries) this.bytes += Buffer.byteLength(e) + 1;
        this.exact = true;
        entryBytes = Buffer.byteLength(entry) + 1 + pieceBytes;
      }
      if (this.bytes + entryBytes <= max) {
        this.entries.push(entry);
        this.bytes += entryBytes;
        if (pieces !== undefined) this.attach(pieces, pieceBytes);
        return;
      }
    }
    this.close();
    const entry = entryAt(0);
    const blockText = this.textOf(c.block);
    const frameHead = headOf(c, blockText, this.bulkResults, this.tenants);
    const headBytes = Buffer.byteLength(frameHead) + ENTRY_OVERHEAD;
    let entryBytes = 3 * entry.length + 1 + pieceBytes;
    let exact = false;
    if (headBytes + entryBytes > max) {
      exact = true;
      entryBytes = Buffer.byteLength(entry) + 1 + pieceBytes;
      // Alone in a frame and still too large: the same refusal a single ExecuteCall gets.
      if (headBytes + entryBytes > max) throw new FrameTooLargeError(headBytes + entryBytes, max, 'encode');
    }
    this.first = c;
    this.head = frameHead;
    this.block = c.block ?? null;
    this.blockText = blockText;
    this.entries.push(entry);
    if (pieces !== undefined) this.attach(pieces, pieceBytes);
    this.bytes = headBytes + entryBytes;
    this.exact = exact;
    this.writer.defer(() => this.close());
  }

  /** Appends an entry's argument bytes to the open batch's attachment. */
  private attach(pieces: readonly Uint8Array[], bytes: number): void {
    for (const p of pieces) this.attachment.push(p);
    this.attachBytes += bytes;
  }

  /** An entry's arguments: `"argsJson":<literal>` for encoded ones when the executor takes them, else `"args":<text>`. */
  private argsField(args: CallArgs): string {
    if (this.argsJson && isEncodedArgs(args)) return `"argsJson":${argsLiteralOf(args)}`;
    return `"args":${argsTextOf(args)}`;
  }

  /**
   * Whether `block` is the open batch's block: the same object, or one with the same JSON text. A
   * builder that makes a fresh block object per call (equal for the calls of one block) still gets one
   * frame per block; the executor reads one block object for the frame either way. Throws what the
   * block's JSON throws (the attempt cannot be sent).
   */
  private sameBlock(block: unknown): boolean {
    const b = block ?? null;
    if (b === this.block) return true;
    if (b === null || this.block === null) return false;
    this.probed = b;
    this.probedText = jsonOf(b);
    return this.probedText === this.blockText;
  }

  /** The JSON text of `block` ('' for none), reusing what `sameBlock` just took. */
  private textOf(block: unknown): string {
    if (block === undefined || block === null) return '';
    return block === this.probed ? this.probedText : jsonOf(block);
  }

  /** Queue the open batch as one frame (before any other frame, and at the writer's flush). */
  close(): void {
    if (this.first === undefined) return;
    const json = `${this.head}${this.entries.join(',')}]}`;
    const attachment = this.attachment;
    const attachBytes = this.attachBytes;
    this.attachment = [];
    this.attachBytes = 0;
    this.first = undefined;
    this.head = '';
    this.entries = [];
    this.bytes = 0;
    this.exact = false;
    this.block = null;
    this.blockText = '';
    this.probed = null;
    this.probedText = '';
    if (attachment.length === 0) this.writer.sendJson(json);
    else this.writer.sendAttached(json, attachment, attachBytes);
  }
}

function sameTaskFields(a: ExecuteCallCommand, b: ExecuteCallCommand): boolean {
  return (
    a.taskId === b.taskId &&
    a.function === b.function &&
    a.codeEpoch === b.codeEpoch &&
    a.budgetMs === b.budgetMs &&
    a.ioCache === b.ioCache &&
    a.tenant === b.tenant
  );
}

/** The frame's text up to its first entry: the task-level fields, the block's text (`blockText`) once. */
function headOf(c: ExecuteCallCommand, blockText: string, bulkResults: boolean, tenants: boolean): string {
  const block = blockText === '' ? '' : `,"block":${blockText}`;
  return (
    `{"type":"ExecuteCalls","taskId":${JSON.stringify(c.taskId)},"function":${JSON.stringify(c.function)}` +
    `${block},"codeEpoch":${JSON.stringify(c.codeEpoch)},"budgetMs":${c.budgetMs}` +
    `${c.ioCache === undefined ? '' : `,"ioCache":${JSON.stringify(c.ioCache)}`}` +
    `${tenants && c.tenant !== undefined ? `,"tenant":${JSON.stringify(c.tenant)}` : ''}` +
    `${bulkResults ? ',"bulkResults":true' : ''},"calls":[`
  );
}
