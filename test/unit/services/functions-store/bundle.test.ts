// Bundles (src/services/functions-store/bundle.ts): the version is the epoch id a local code view
// computes for the same files; the size limits refuse with the limit and the size; decoding refuses
// anything whose files do not hash to the version it is announced under.
import { gunzipSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeEpochId } from '../../../../src/executor/code-epochs.js';
import {
  BUNDLE_FORMAT,
  decodeBundle,
  encodeBundle,
} from '../../../../src/services/functions-store/bundle.js';
import {
  MAX_BUNDLE_FILE_BYTES,
  MAX_BUNDLE_FILES,
  MAX_BUNDLE_STORED_BYTES,
} from '../../../../src/services/functions-store/bundle-limits.js';
import { FunctionsStoreError } from '../../../../src/services/functions-store/errors.js';

const files = [
  { fileName: 'b.ts', source: 'export default async () => "b";\n' },
  { fileName: 'a.py', source: 'async def main(ctx):\n    return "a"\n' },
];

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(FunctionsStoreError);
    return (err as FunctionsStoreError).code;
  }
}

/** A stored value with the record edited by `edit`. */
function reencode(stored: Buffer, edit: (record: Record<string, unknown>) => void): Buffer {
  const record = JSON.parse(gunzipSync(stored).toString('utf8')) as Record<string, unknown>;
  edit(record);
  return gzipSync(Buffer.from(JSON.stringify(record)));
}

describe('encodeBundle', () => {
  it('the version is the epoch id of the same files, whatever their order; files come back sorted', () => {
    const b = encodeBundle(files, 5);
    expect(b.version).toBe(
      computeEpochId(files.map((f) => ({ ...f, name: f.fileName.replace(/\..*$/, '') }))),
    );
    expect(encodeBundle([...files].reverse(), 9).version).toBe(b.version);
    expect(b.digest.startsWith(b.version)).toBe(true);
    expect(b.files.map((f) => f.fileName)).toEqual(['a.py', 'b.ts']);
    expect(b.sourceBytes).toBe(files.reduce((n, f) => n + Buffer.byteLength(f.source), 0));
  });

  it('a changed byte, a renamed file or one file more is another version', () => {
    const base = encodeBundle(files, 0).version;
    const variants = [
      [{ ...files[0]!, source: `${files[0]!.source} ` }, files[1]!],
      [{ ...files[0]!, fileName: 'c.ts' }, files[1]!],
      [...files, { fileName: 'z.mjs', source: '' }],
    ];
    for (const v of variants) expect(encodeBundle(v, 0).version).not.toBe(base);
  });

  it.each([
    ['no files', [], 'BUNDLE_EMPTY'],
    ['a name that is not a function file', [{ fileName: 'helper.d.ts', source: '' }], 'BUNDLE_CORRUPT'],
    ['the same file twice', [files[0]!, files[0]!], 'BUNDLE_CORRUPT'],
    [
      'a file above the per-file limit',
      [{ fileName: 'big.ts', source: 'x'.repeat(MAX_BUNDLE_FILE_BYTES + 1) }],
      'BUNDLE_TOO_LARGE',
    ],
    [
      'more files than allowed',
      Array.from({ length: MAX_BUNDLE_FILES + 1 }, (_, i) => ({ fileName: `f${i}.js`, source: '' })),
      'BUNDLE_TOO_LARGE',
    ],
  ] as const)('refuses %s', (_what, input, code) => {
    expect(codeOf(() => encodeBundle(input, 0))).toBe(code);
  });

  it('refuses a bundle above the stored limit, naming the limit and the size', () => {
    // Random text does not compress: 1.5 MiB of it exceeds the 1 MiB stored limit.
    let seed = 1;
    const noise = (n: number) =>
      Array.from({ length: n }, () =>
        String.fromCharCode(33 + ((seed = (seed * 48271) % 2147483647) % 90)),
      ).join('');
    const big = [0, 1].map((i) => ({ fileName: `n${i}.js`, source: noise(800_000) }));
    try {
      encodeBundle(big, 0);
      expect.unreachable();
    } catch (err) {
      const e = err as FunctionsStoreError;
      expect(e.code).toBe('BUNDLE_TOO_LARGE');
      expect(e.limit).toBe(MAX_BUNDLE_STORED_BYTES);
      expect(e.actual).toBeGreaterThan(MAX_BUNDLE_STORED_BYTES);
      expect(e.message).toContain(`${MAX_BUNDLE_STORED_BYTES} bytes compressed`);
    }
  });
});

describe('decodeBundle', () => {
  const b = encodeBundle(files, 42);

  it('round-trips and verifies against the version and the pointer digest', () => {
    const d = decodeBundle(b.stored, { version: b.version, digest: b.digest });
    expect(d).toEqual({
      version: b.version,
      digest: b.digest,
      deployedAtMs: 42,
      files: b.files,
      sourceBytes: b.sourceBytes,
    });
  });

  it.each([
    [
      'other code under the same version',
      (r: Record<string, unknown>): void => void (r['files'] = [{ fileName: 'b.ts', source: 'evil' }]),
      'BUNDLE_TAMPERED',
    ],
    [
      'a forged record digest',
      (r: Record<string, unknown>): void => void (r['digest'] = '0'.repeat(64)),
      'BUNDLE_TAMPERED',
    ],
    ['another format', (r: Record<string, unknown>): void => void (r['format'] = 'x'), 'BUNDLE_CORRUPT'],
    [
      'files that are not strings',
      (r: Record<string, unknown>): void => void (r['files'] = [{ fileName: 'a.ts', source: 1 }]),
      'BUNDLE_CORRUPT',
    ],
    [
      'a negative deployedAtMs',
      (r: Record<string, unknown>): void => void (r['deployedAtMs'] = -1),
      'BUNDLE_CORRUPT',
    ],
  ] as const)('refuses %s', (_what, edit, code) => {
    expect(codeOf(() => decodeBundle(reencode(b.stored, edit), { version: b.version }))).toBe(code);
  });

  it('refuses a bundle stored under another version, or announced with another digest', () => {
    const other = encodeBundle([files[0]!], 0);
    expect(codeOf(() => decodeBundle(b.stored, { version: other.version }))).toBe('BUNDLE_TAMPERED');
    expect(codeOf(() => decodeBundle(b.stored, { version: b.version, digest: other.digest }))).toBe(
      'BUNDLE_TAMPERED',
    );
  });

  it('refuses garbage, non-JSON gzip and a decompression bomb without inflating it whole', () => {
    const v = { version: b.version };
    expect(codeOf(() => decodeBundle(Buffer.from('not gzip'), v))).toBe('BUNDLE_CORRUPT');
    expect(codeOf(() => decodeBundle(gzipSync(Buffer.from('{')), v))).toBe('BUNDLE_CORRUPT');
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20)); // 64 MiB of spaces, ~64 KiB stored
    expect(bomb.length).toBeLessThan(MAX_BUNDLE_STORED_BYTES);
    expect(codeOf(() => decodeBundle(bomb, v))).toBe('BUNDLE_CORRUPT');
    expect(codeOf(() => decodeBundle(Buffer.alloc(MAX_BUNDLE_STORED_BYTES + 1), v))).toBe('BUNDLE_CORRUPT');
  });

  it('property: any edit of a file source is refused; the untouched bundle always decodes', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/),
            fc.constantFrom('.ts', '.js', '.mjs', '.py'),
            fc.string(),
          ),
          {
            minLength: 1,
            maxLength: 6,
          },
        ),
        fc.nat(),
        fc.string({ minLength: 1 }),
        (raw, pick, extra) => {
          const seen = new Set<string>();
          const input = raw
            .filter(([n]) => !seen.has(n) && seen.add(n))
            .map(([n, ext, source]) => ({ fileName: `${n}${ext}`, source }));
          const enc = encodeBundle(input, 0);
          expect(decodeBundle(enc.stored, { version: enc.version, digest: enc.digest }).files).toEqual(
            enc.files,
          );
          const tampered = reencode(enc.stored, (r) => {
            const list = r['files'] as { source: string }[];
            list[pick % list.length]!.source += extra;
          });
          expect(codeOf(() => decodeBundle(tampered, { version: enc.version }))).toBe('BUNDLE_TAMPERED');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the record format constant is what encodeBundle writes', () => {
    expect(JSON.parse(gunzipSync(b.stored).toString('utf8')).format).toBe(BUNDLE_FORMAT);
  });
});
