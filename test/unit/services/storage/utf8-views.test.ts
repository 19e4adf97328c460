// utf8Views (src/services/storage/row-json.ts): a scan page's row texts written into one buffer, each
// row a view of its own UTF-8 — what travels to the executor as the row's bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Views } from '../../../../src/services/storage/row-json.js';

const decode = (v: Uint8Array | undefined) => (v === undefined ? undefined : new TextDecoder().decode(v));

describe('utf8Views', () => {
  it.each([
    { name: 'ASCII rows', texts: ['{"a":1}', '{"b":"x"}'] },
    { name: 'multi-byte text and a surrogate pair', texts: ['{"s":"é"}', '{"s":"😀 \u2028"}', '{}'] },
    { name: 'flagged rows (undefined) stay undefined', texts: ['{"a":1}', undefined, '{"c":3}'] },
    { name: 'an empty page', texts: [] },
  ])('$name', ({ texts }) => {
    const views = utf8Views(texts);
    expect(views.map(decode)).toEqual(texts);
    const defined = views.filter((v): v is Uint8Array => v !== undefined);
    // One buffer for the page, the views back to back.
    for (const v of defined) expect(v.buffer).toBe(defined[0]!.buffer);
    for (let i = 1; i < defined.length; i++)
      expect(defined[i]!.byteOffset).toBe(defined[i - 1]!.byteOffset + defined[i - 1]!.length);
  });

  it('each view is exactly its text as UTF-8 (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.string({ unit: 'grapheme' }), { nil: undefined })), (texts) => {
        const views = utf8Views(texts);
        texts.forEach((t, i) => {
          if (t === undefined) expect(views[i]).toBeUndefined();
          else expect(Buffer.from(views[i]!).equals(Buffer.from(t, 'utf8'))).toBe(true);
        });
      }),
    );
  });
});
