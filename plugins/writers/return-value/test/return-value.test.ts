import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import returnValueWriter from '../src/index.js';

const schema = JSON.parse(readFileSync(new URL('../schema.json', import.meta.url), 'utf8')) as object;
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  blockx: { kind: string; type: string; schema: string };
};
const validate = new Ajv({ allErrors: true, strict: true }).compile(schema);
const taskCtx = {
  taskId: 't1',
  stage: 'plugin',
  deadlineMs: 0,
  signal: new AbortController().signal,
} as const;
const io = {} as never;

describe('ReturnValueResultHandler writer', () => {
  it('declares itself as the ReturnValueResultHandler writer with its schema', () => {
    expect(manifest.blockx).toEqual({
      kind: 'writer',
      type: 'ReturnValueResultHandler',
      schema: './schema.json',
    });
  });

  it('returns the call outputs as its one successful result', async () => {
    const outputs = ['hello, ct2', { n: 1 }, null];
    const results = await returnValueWriter.execute(taskCtx, {}, outputs, io);
    expect(results).toEqual([{ pluginName: 'ReturnValueResultHandler', success: true, result: outputs }]);
  });

  it('returns an empty array when there were no outputs', async () => {
    const results = await returnValueWriter.execute(taskCtx, {}, [], io);
    expect(results).toEqual([{ pluginName: 'ReturnValueResultHandler', success: true, result: [] }]);
  });

  it('takes an empty config and rejects any option', () => {
    expect(validate({})).toBe(true);
    expect(validate({ verbose: true })).toBe(false);
    expect(validate.errors?.[0]?.keyword).toBe('additionalProperties');
    expect(validate([])).toBe(false);
  });
});
