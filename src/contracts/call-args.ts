// A call's arguments as a builder hands them over: values, or JSON text encoded once where the rows were
// read (docs/performance.md § Rows as JSON text, docs/plugins.md § Rows as JSON text). The text form lets
// a scanned row travel from storage to the execution thread that runs the call without being decoded,
// re-encoded or escaped on the way: the database writes it, the Worker splices it into the ExecuteCalls
// frame as it is, and the execution thread parses it once. Pure: no imports, no IO.
//
// Rows may also come as bytes (docs/performance.md § Rows as bytes): the row's JSON text as UTF-8, as the
// database returned it. Arguments made of such rows keep them as a list of byte pieces whose
// concatenation is the JSON text of the argument array; a page joins its calls' lists without copying,
// and the frame writer copies each piece once, into the frame. Their `literal` is made from the bytes
// the first time something asks for it (an executor that does not take bytes, a plugin reading it).

/**
 * The arguments of one call as JSON text, carried as a JSON string literal: `literal` is what
 * `JSON.stringify(text)` returns for the JSON text `text` of the argument array (quoted and escaped),
 * the very form the text takes inside a frame. Make one with `encodedArgs`, `encodedRowArgs` or
 * `encodedArgsText`; anything else with a string `literal` is checked before it is sent.
 */
export interface EncodedArgs {
  readonly literal: string;
  /**
   * The same text as UTF-8 byte pieces, when the arguments were made from rows read as bytes
   * (`encodedRowArgs` of an EncodedRow with `bytes`): their concatenation is the JSON text of the
   * argument array. Absent otherwise.
   */
  readonly bytes?: readonly Uint8Array[];
}

/** A call's arguments: the values (`function(ctx, ...args)`), or their encoded text. */
export type CallArgs = readonly unknown[] | EncodedArgs;

/**
 * A scanned row as JSON text (`TaskIo.scanJson`): `literal` is the row's JSON text as a JSON string
 * literal (the JSON of the very row `scan` yields, quoted), `fields` the columns the scan was asked to
 * decode besides (to route the row: its block number, its hash).
 */
export interface EncodedRow {
  readonly literal: string;
  readonly fields: Readonly<Record<string, unknown>>;
  /** The row's JSON text as UTF-8, when storage read it so (then `literal` is made from it on demand). */
  readonly bytes?: Uint8Array;
}

/**
 * The mark of EncodedArgs made here, from literals known to be well formed: they are sent as they are.
 * Another object of the same shape (a plugin's own) is parsed once before it is sent (`argsTextOf`). A
 * registered symbol, so what a second instance of this module made (the plugin loader compiles
 * TypeScript plugins apart) carries the same mark; a property rather than a WeakSet of the made objects,
 * which cost ~0.5 µs per call to add to and weighs on every garbage collection (docs/performance.md §
 * Rows as JSON text). JSON and structured clone leave symbol keys out.
 */
const WELL_FORMED: unique symbol = Symbol.for('blockx.encodedArgs.wellFormed');

/** Bytes of one-byte JSON punctuation, shared by every piece list (never written to). */
const OPEN = Uint8Array.of(0x5b); // [
const CLOSE = Uint8Array.of(0x5d); // ]
const COMMA = Uint8Array.of(0x2c); // ,
const utf8 = new TextEncoder();
const text8 = new TextDecoder('utf-8', { fatal: true });

/** The text of byte pieces (UTF-8). Throws a TypeError when they are not UTF-8. */
function textOfPieces(pieces: readonly Uint8Array[]): string {
  let n = 0;
  for (const p of pieces) n += p.length;
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of pieces) {
    all.set(p, at);
    at += p.length;
  }
  return text8.decode(all);
}

/** Total bytes of byte pieces. */
export function sizeOfPieces(pieces: readonly Uint8Array[]): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

/**
 * A row read as bytes (storage's scanJson): `literal` is made from `bytes` on first use and kept. The
 * bytes must be the UTF-8 JSON text of the row, as the database wrote it.
 */
export class BytesRow implements EncodedRow {
  private text: string | undefined;
  constructor(
    readonly bytes: Uint8Array,
    readonly fields: Readonly<Record<string, unknown>>,
  ) {}
  get literal(): string {
    return (this.text ??= JSON.stringify(text8.decode(this.bytes)));
  }
}

/** Arguments as byte pieces, well formed by construction; `literal` made on first use. */
class BytesArgs implements EncodedArgs {
  readonly [WELL_FORMED] = true as const;
  private text: string | undefined;
  constructor(readonly bytes: readonly Uint8Array[]) {}
  get literal(): string {
    return (this.text ??= JSON.stringify(textOfPieces(this.bytes)));
  }
}

const NO_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({});

/** A row held as values → its EncodedRow (the text of `row`; `fields` taken from `full`, default `row`). */
export function encodeRow(
  row: Readonly<Record<string, unknown>>,
  fields: readonly string[] = [],
  full: Readonly<Record<string, unknown>> = row,
): EncodedRow {
  if (fields.length === 0) return { literal: JSON.stringify(JSON.stringify(row)), fields: NO_FIELDS };
  const picked: Record<string, unknown> = {};
  for (const f of fields) picked[f] = full[f];
  return { literal: JSON.stringify(JSON.stringify(row)), fields: picked };
}

interface MadeArgs extends EncodedArgs {
  readonly [WELL_FORMED]?: true;
}

function made(literal: string): EncodedArgs {
  const args: MadeArgs = { literal, [WELL_FORMED]: true };
  return Object.freeze(args);
}

function isWellFormed(args: EncodedArgs): boolean {
  return (args as MadeArgs)[WELL_FORMED] === true;
}

/** Arguments whose JSON text is `text` (it must be the JSON of an array; checked when the call is sent). */
export function encodedArgsText(text: string): EncodedArgs {
  return { literal: JSON.stringify(text) };
}

/** `[row, ...extraArgs]` for rows of a JSON scan: the extra arguments are encoded once, here. */
export function encodedRowArgs(extraArgs: readonly unknown[]): (row: EncodedRow) => EncodedArgs {
  const extra = JSON.stringify(extraArgs);
  // The tail after the row, as literal content (escaped): `,a,b]` or `]`.
  const tailText = extra === '[]' ? ']' : `,${extra.slice(1)}`;
  const tail = JSON.stringify(tailText).slice(1, -1);
  const tailBytes = tailText === ']' ? CLOSE : utf8.encode(tailText);
  return (row) =>
    row.bytes !== undefined
      ? new BytesArgs([OPEN, row.bytes, tailBytes])
      : made(`"[${row.literal.slice(1, -1)}${tail}"`);
}

/**
 * The arguments of a page of calls (docs/executor.md § Pages): the JSON text of the array of each call's
 * argument array, `[[…],[…]]`, made from their encoded texts without parsing them (each literal's
 * content spliced in as it is). Throws a TypeError when one of them is not well formed.
 */
export function encodedArgsList(list: readonly EncodedArgs[]): EncodedArgs {
  if (list.every((a) => a.bytes !== undefined && isWellFormed(a))) {
    // Byte pieces joined, nothing copied: `[` a `,` b `,` … `]`.
    const pieces: Uint8Array[] = [OPEN];
    for (let i = 0; i < list.length; i++) {
      if (i > 0) pieces.push(COMMA);
      for (const p of list[i]!.bytes!) pieces.push(p);
    }
    pieces.push(CLOSE);
    return new BytesArgs(pieces);
  }
  const parts = new Array<string>(list.length);
  for (let i = 0; i < list.length; i++) parts[i] = argsLiteralOf(list[i]!).slice(1, -1);
  return made(`"[${parts.join(',')}]"`);
}

/**
 * The size of encoded arguments' text without making it: bytes of their pieces, or characters of their
 * literal (a bound on either side of the frame limit, for paging).
 */
export function encodedSizeOf(args: EncodedArgs): number {
  return args.bytes !== undefined ? sizeOfPieces(args.bytes) : args.literal.length;
}

/** Whether `args` is the encoded form (anything that is not an array). */
export function isEncodedArgs(args: CallArgs): args is EncodedArgs {
  return !Array.isArray(args);
}

/** Whether `args` is a well-formed CallArgs value (an array, or an object with a string `literal`). */
export function isCallArgs(args: unknown): args is CallArgs {
  if (Array.isArray(args)) return true;
  if (typeof args !== 'object' || args === null) return false;
  // Made here (bytes included): well formed, and its literal is not made just to look at it.
  if (isWellFormed(args as EncodedArgs)) return true;
  return typeof (args as EncodedArgs).literal === 'string';
}

/**
 * The JSON string literal of the arguments' text, checked: an EncodedArgs made by this module as it is;
 * any other is parsed to make sure it is a string holding the JSON of an array. Throws a TypeError when
 * it is not (the attempt cannot be sent).
 */
export function argsLiteralOf(args: EncodedArgs): string {
  if (isWellFormed(args)) return args.literal;
  argsTextOf(args);
  return args.literal;
}

/** The JSON text of the arguments (values: JSON.stringify; encoded: the literal's text, checked). */
export function argsTextOf(args: CallArgs): string {
  if (!isEncodedArgs(args)) return JSON.stringify(args);
  const text: unknown = JSON.parse(args.literal);
  if (isWellFormed(args)) return text as string;
  if (typeof text !== 'string' || !Array.isArray(JSON.parse(text)))
    throw new TypeError('encoded call arguments are not the JSON text of an array');
  return text;
}

/** The argument values (encoded ones parsed). */
export function argsValuesOf(args: CallArgs): readonly unknown[] {
  return isEncodedArgs(args) ? (JSON.parse(argsTextOf(args)) as unknown[]) : args;
}
