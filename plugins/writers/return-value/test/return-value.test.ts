import { describe, expect, it } from 'vitest';
import returnValueWriter from '../src/index.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;
const io = {} as never;

describe('ReturnValueResultHandler writer', () => {
  itDeclaresItself(pkg, { kind: 'writer', type: 'ReturnValueResultHandler' });

  it('returns the call outputs as its one successful result', async () => {
    const outputs = ['hello, ct2', { n: 1 }, null];
    const results = await returnValueWriter.execute(taskCtx(), {}, outputs, io);
    expect(results).toEqual([{ pluginName: 'ReturnValueResultHandler', success: true, result: outputs }]);
  });

  it('returns an empty array when there were no outputs', async () => {
    const results = await returnValueWriter.execute(taskCtx(), {}, [], io);
    expect(results).toEqual([{ pluginName: 'ReturnValueResultHandler', success: true, result: [] }]);
  });

  it('takes an empty config and rejects any option', () => {
    expect(validate({})).toBe(true);
    expect(validate({ verbose: true })).toBe(false);
    expect(validate.errors?.[0]?.keyword).toBe('additionalProperties');
    expect(validate([])).toBe(false);
  });
});
