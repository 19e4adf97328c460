import { describe, expect, it } from 'vitest';
import callListBuilder from '../src/index.js';
import { itDeclaresItself, packageUnderTest } from '../../../../test/support/plugin-package.js';

const pkg = await packageUnderTest(import.meta.url);
const { validate, taskCtx } = pkg;
const io = {} as never;

describe('CallListCallConfig builder', () => {
  itDeclaresItself(pkg, { kind: 'builder', type: 'CallListCallConfig' });

  it('builds one call per inner array, with that array as the arguments', async () => {
    const list = await callListBuilder.build(
      taskCtx(),
      { function: 'hello_world', callList: [['ct2'], ['blockx', 2], []] },
      io,
    );
    expect(list.calls).toEqual([
      { function: 'hello_world', args: ['ct2'] },
      { function: 'hello_world', args: ['blockx', 2] },
      { function: 'hello_world', args: [] },
    ]);
  });

  it('builds no calls from an empty callList', async () => {
    expect((await callListBuilder.build(taskCtx(), { function: 'f', callList: [] }, io)).calls).toEqual([]);
  });

  it('accepts the README example config', () => {
    expect(validate({ function: 'hello_world', callList: [['ct2'], ['blockx']] })).toBe(true);
  });

  it.each([
    ['callList missing', { function: 'hello_world' }, 'required'],
    ['function missing', { callList: [] }, 'required'],
    ['function empty', { function: '', callList: [] }, 'minLength'],
    ['function is a path', { function: '../etc/passwd', callList: [] }, 'pattern'],
    ['an entry that is not an array', { function: 'f', callList: [['a'], 'b'] }, 'type'],
    ['callList not an array', { function: 'f', callList: { a: 1 } }, 'type'],
    ['an unknown field', { function: 'f', callList: [], extra: true }, 'additionalProperties'],
  ])('rejects %s (rule %s)', (_name, config, rule) => {
    expect(validate(config)).toBe(false);
    expect(validate.errors?.map((e) => e.keyword)).toContain(rule);
  });
});
