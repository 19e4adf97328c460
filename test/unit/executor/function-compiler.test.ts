import { describe, expect, it } from 'vitest';
import type { EpochSnapshot } from '../../../src/executor/code-epochs.js';
import { FunctionCompiler } from '../../../src/executor/function-compiler.js';

const snapshot = (files: { fileName: string; source: string }[]): EpochSnapshot => ({
  id: 'e0',
  functionsDir: '/srv/functions',
  files: files.map((f) => ({ ...f, name: f.fileName.replace(/\.(ts|mjs|js)$/, '') })),
});

describe('FunctionCompiler', () => {
  it('compiles TypeScript to an instance module addressed by file URL and epoch', async () => {
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
    expect(r.code).toMatch(/^export function __blockx_instantiate\(\) \{var hi_default = async/);
    expect(r.code).not.toContain('Promise<string>');
    expect(r.code).toMatch(/\n\/\/# sourceMappingURL=data:application\/json;base64,[^\n]*$/);
    expect(r.moduleKey).toBe('e0/hi');
  });

  it('makes JavaScript an instance module without compiling it', async () => {
    const source = 'const one = (): number => 1;\nexport default one;\n';
    const r = await new FunctionCompiler().compile(snapshot([{ fileName: 'one.mjs', source }]), 'one');
    expect(r).toMatchObject({ ok: false, code: 'FUNCTION_LOAD_FAILED' }); // a type annotation is not JavaScript
    const js = 'const one = () => 1;\nexport default one;\n';
    const ok = await new FunctionCompiler().compile(snapshot([{ fileName: 'one.mjs', source: js }]), 'one');
    expect(ok.ok && ok.code).toContain('const one = () => 1;\n');
  });

  it('fails a JavaScript syntax error naming the file, line and column', async () => {
    const r = await new FunctionCompiler().compile(
      snapshot([{ fileName: 'broken.mjs', source: 'export default () => {\n  return (1 + ;\n};\n' }]),
      'broken',
    );
    expect(!r.ok && r.message).toMatch(/^cannot compile \/srv\/functions\/broken\.mjs: .*\(2:\d+\)$/);
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
