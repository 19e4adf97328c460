import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  DeploymentUnknownError,
  describeError,
  formatConfigIssue,
  KernelErrorCode,
  PluginError,
  reportedRetryable,
  TaskConfigError,
} from '../../../src/kernel/errors.js';

describe('kernel error codes', () => {
  it('each key equals its code, so codes never drift', () => {
    for (const [key, code] of Object.entries(KernelErrorCode)) expect(code).toBe(key);
  });

  it('ConfigError lists every issue with its location', () => {
    const err = new ConfigError([
      { source: 'file', file: '/a.yaml', line: 3, column: 5, path: 'x.y', message: 'bad' },
      {
        source: 'env',
        variable: 'WORKER_TASK_SLOTS',
        path: 'deployments.*.worker.taskSlots',
        message: 'worse',
      },
    ]);
    expect(err.code).toBe('CONFIG_INVALID');
    expect(err.message).toContain('/a.yaml:3:5: x.y: bad');
    expect(err.message).toContain('env WORKER_TASK_SLOTS: deployments.*.worker.taskSlots: worse');
  });

  it('DeploymentUnknownError names the deployment and the declared ones', () => {
    const dep = new DeploymentUnknownError('nope', ['block', 'bundle']);
    expect(dep).toMatchObject({ code: 'DEPLOYMENT_UNKNOWN', deployment: 'nope' });
    expect(dep.message).toBe('unknown deployment "nope" (declared: block, bundle)');
    expect(new DeploymentUnknownError('x', []).message).toBe('unknown deployment "x" (declared: none)');
  });

  it.each([
    [new Error('boom'), 'boom', undefined],
    [new TypeError(''), 'TypeError', undefined],
    [Object.assign(new Error('later'), { retryable: true }), 'later', true],
    [Object.assign(new Error('never'), { retryable: false }), 'never', false],
    [Object.assign(new Error('odd'), { retryable: 'yes' }), 'odd', undefined],
    ['plain text', 'plain text', undefined],
    [{ retryable: true }, '[object Object]', true],
    [null, 'null', undefined],
  ])('describeError / reportedRetryable of %o', (err, text, retryable) => {
    expect(describeError(err)).toBe(text);
    expect(reportedRetryable(err)).toBe(retryable);
  });

  it('formats a file issue without a position as the file alone', () => {
    expect(formatConfigIssue({ source: 'file', file: '/a.yaml', path: '', message: 'm' })).toBe(
      '/a.yaml: (root): m',
    );
  });

  it('PluginError carries plugin, hook, path and cause as fields', () => {
    const cause = new Error('boom');
    const err = new PluginError(
      KernelErrorCode.PLUGIN_HOOK_FAILED,
      { pluginPath: '/p/x', plugin: 'x', hook: 'shutdown', message: 'tap failed' },
      { cause },
    );
    expect(err).toMatchObject({
      code: 'PLUGIN_HOOK_FAILED',
      pluginPath: '/p/x',
      plugin: 'x',
      hook: 'shutdown',
      cause,
    });
    expect(err.message).toContain('/p/x');
  });

  it('TaskConfigError names the rule of each issue', () => {
    const err = new TaskConfigError(
      [{ path: '/callList', rule: 'type', message: 'must be array' }],
      'CallListCallConfig',
    );
    expect(err.message).toBe(
      'invalid task config for CallListCallConfig: /callList must be array (rule: type)',
    );
  });
});
