import { describe, expect, it } from 'vitest';
import type { EpochSnapshot } from '../../../src/executor/code-epochs.js';
import { FunctionCompiler } from '../../../src/executor/function-compiler.js';

const snapshot = (files: { fileName: string; source: string }[]): EpochSnapshot => ({
  id: 'e0',
  functionsDir: '/srv/functions',
  files: files.map((f) => ({ ...f, name: f.fileName.replace(/\.(ts|mjs|js)$/, '') })),
});

describe('FunctionCompiler', () => {
  it('compiles TypeScript to an ES module addressed by file URL and epoch', async () => {
    const r = await new FunctionCompiler().compile(
      snapshot([
        {
          fileName: 'hi.ts',
          source: 'export default async (_c: unknown, n: string): Promise<string> => `hi ${n}`;',
        },
      ]),
      'hi',
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.url).toBe('file:///srv/functions/hi.ts?blockx-epoch=e0');
    expect(r.path).toBe('/srv/functions/hi.ts');
    expect(r.code).toMatch(/as default/);
    expect(r.code).not.toContain('Promise<string>');
    expect(r.moduleKey).toBe('e0/hi');
  });

  it('passes JavaScript through unchanged', async () => {
    const source = 'export default () => 1;\n';
    const r = await new FunctionCompiler().compile(snapshot([{ fileName: 'one.mjs', source }]), 'one');
    expect(r).toMatchObject({ ok: true, code: source });
  });

  it('fails an unknown function name with the directory, the epoch and what exists', async () => {
    const r = await new FunctionCompiler().compile(snapshot([{ fileName: 'a.ts', source: '' }]), 'nope');
    expect(r).toMatchObject({ ok: false, code: 'FUNCTION_NOT_FOUND' });
    expect(!r.ok && r.message).toBe(
      'function "nope" not found in /srv/functions (code epoch e0); expected nope.ts, nope.mjs or nope.js; available: a',
    );
  });

  it('fails a syntax error naming the file, line and column', async () => {
    const r = await new FunctionCompiler().compile(
      snapshot([{ fileName: 'broken.ts', source: 'export default () => {\n  return (1 + ;\n};\n' }]),
      'broken',
    );
    expect(r).toMatchObject({ ok: false, code: 'FUNCTION_LOAD_FAILED' });
    expect(!r.ok && r.message).toMatch(/^cannot compile \/srv\/functions\/broken\.ts: 2:\d+: /);
  });

  it('refuses a name defined by two files', async () => {
    const r = await new FunctionCompiler().compile(
      snapshot([
        { fileName: 'dup.js', source: 'export default () => 1;' },
        { fileName: 'dup.ts', source: 'export default () => 2;' },
      ]),
      'dup',
    );
    expect(r).toMatchObject({ ok: false, code: 'FUNCTION_LOAD_FAILED' });
    expect(!r.ok && r.message).toContain('dup.js, dup.ts');
  });

  it('caches per epoch and forgets an epoch on drop', async () => {
    const compiler = new FunctionCompiler();
    const snap = snapshot([{ fileName: 'a.ts', source: 'export default () => 1;' }]);
    expect(compiler.peek('e0', 'a')).toBeUndefined();
    const first = compiler.compile(snap, 'a');
    expect(compiler.compile(snap, 'a')).toBe(first);
    const done = await first;
    expect(compiler.peek('e0', 'a')).toBe(done);
    compiler.drop('e0');
    expect(compiler.peek('e0', 'a')).toBeUndefined();
  });
});
