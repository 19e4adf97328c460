// The one function resolver (src/executor/core/function-resolution.ts), used by the executor and by
// the Worker's in-process link alike.
import { describe, expect, it } from 'vitest';
import {
  parseFunctionFileName,
  resolveFunctionFile,
} from '../../../../src/executor/core/function-resolution.js';

const files = (...names: string[]) =>
  names.map((fileName) => ({ fileName, name: parseFunctionFileName(fileName)!.name }));

describe('resolveFunctionFile', () => {
  it.each([
    [['f.ts'], 'f', 'f.ts'],
    [['f.mjs', 'g.js'], 'f', 'f.mjs'],
    [['f.js'], 'f', 'f.js'],
  ])('%j: %s is %s', (list, name, expected) => {
    const r = resolveFunctionFile(files(...list), name, '/fns');
    expect(r.ok && r.file.fileName).toBe(expected);
  });

  it('two files for one name is an error, whichever extensions', () => {
    for (const pair of [
      ['f.js', 'f.ts'],
      ['f.mjs', 'f.ts'],
      ['f.js', 'f.mjs'],
    ]) {
      expect(resolveFunctionFile(files(...pair), 'f', '/fns')).toMatchObject({
        ok: false,
        code: 'FUNCTION_LOAD_FAILED',
        message: expect.stringContaining('keep one'),
      });
    }
  });

  it('names what is there when the name is not', () => {
    expect(resolveFunctionFile(files('a.ts'), 'b', '/fns', 'E1')).toEqual({
      ok: false,
      code: 'FUNCTION_NOT_FOUND',
      message: 'function "b" not found in /fns (code epoch E1); expected b.ts, b.mjs or b.js; available: a',
    });
  });
});
