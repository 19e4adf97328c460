import { describe, expect, it } from 'vitest';
import { BlockxError, KernelErrorCode } from '../../../src/kernel/errors.js';
import { defineBuilder, defineWriter, isRetryableWriterFailure, PluginError } from '../../../src/plugin.js';

class ShoutError extends PluginError<'NOT_A_STRING', { outputIndex: number }> {}

describe('PluginError (blockx/plugin)', () => {
  it.each([
    ['defaults', new PluginError('BAD', 'bad output'), { code: 'BAD', retryable: false, details: undefined }],
    [
      'options',
      new PluginError('BUSY', 'try later', { retryable: true, details: { table: 't' } }),
      { code: 'BUSY', retryable: true, details: { table: 't' } },
    ],
  ])(
    'a plugin-made error keeps its message and carries code, retryable and details (%s)',
    (_n, err, fields) => {
      expect(err).toMatchObject({ ...fields, pluginPath: '', plugin: undefined, hook: undefined });
      expect(err.message).toBe(fields.code === 'BAD' ? 'bad output' : 'try later');
      expect(err).toBeInstanceOf(BlockxError);
      expect(isRetryableWriterFailure(err)).toBe(fields.retryable);
    },
  );

  it('a kernel-made error names the plugin and its path in the message', () => {
    const cause = new Error('boom');
    const err = new PluginError(
      KernelErrorCode.PLUGIN_HOOK_FAILED,
      { pluginPath: '/p/x', plugin: 'x', hook: 'shutdown', message: 'tap failed' },
      { cause },
    );
    expect(err.message).toBe('PLUGIN_HOOK_FAILED: plugin x at /p/x: tap failed');
    expect(err).toMatchObject({ retryable: false, pluginPath: '/p/x', plugin: 'x', hook: 'shutdown', cause });
  });

  it('a subclass is named after itself and keeps the ordinary instanceof', () => {
    const own = new ShoutError('NOT_A_STRING', 'output 0 is not a string', { details: { outputIndex: 0 } });
    expect(own.name).toBe('ShoutError');
    expect(own).toBeInstanceOf(PluginError);
    expect(new PluginError('X', 'x')).not.toBeInstanceOf(ShoutError);
  });

  it.each([
    ['a plain Error', new Error('x'), false],
    ['a duck-typed writer failure', Object.assign(new Error('x'), { code: 'X', retryable: false }), false],
    ['null', null, false],
    ['a string', 'PluginError', false],
  ])('instanceof is false for %s', (_n, value, expected) => {
    expect(value instanceof PluginError).toBe(expected);
  });

  it('instanceof holds for an error made by another copy of the module', async () => {
    // A query string makes vite load the module again: a second copy, as a plugin's own install would be.
    const url = '../../../src/kernel/errors.js?another-copy';
    const other = (await import(/* @vite-ignore */ url)) as { PluginError: typeof PluginError };
    expect(other.PluginError).not.toBe(PluginError);
    const foreign = new other.PluginError('BAD', 'from another copy');
    expect(foreign instanceof PluginError).toBe(true);
    expect(new PluginError('BAD', 'here') instanceof other.PluginError).toBe(true);
  });
});

describe('defineBuilder / defineWriter', () => {
  it('return the plugin they are given, unchanged', () => {
    const builder = { name: 'b', build: () => ({ calls: [] }) };
    const writer = { execute: async () => [] };
    expect(defineBuilder(builder)).toBe(builder);
    expect(defineWriter(writer)).toBe(writer);
  });
});
