// Small pure helpers of the phase functions: failure outcomes and checks of what plugins return (what an
// error says of itself, describeError and reportedRetryable, is src/kernel/errors.ts). Kept apart so
// orchestrator-phases.ts reads as the phase rules only.

import { isCallArgs } from '../../../../contracts/call-args.js';
import { FailureCode, type PhaseFailure, type PluginResult } from '../../core/index.js';
import type { CallSpec, WriterResult } from '../../../../kernel/plugin-types.js';

export function failure(
  failureCode: FailureCode,
  message: string,
  extra: Pick<PhaseFailure, 'retryable' | 'pluginResults'> = {},
): PhaseFailure {
  return { ok: false, failureCode, message, ...extra };
}

/** Why a builder's return value is not a call list, or undefined when it is one. */
export function callListProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { calls?: unknown }).calls)) {
    return 'the builder did not return a call list ({calls: [...]})';
  }
  const calls = (value as { calls: unknown[] }).calls;
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i] as Partial<CallSpec> | null;
    if (typeof call !== 'object' || call === null) return `calls[${i}] is not an object`;
    if (typeof call.function !== 'string' || call.function === '')
      return `calls[${i}].function is not a name`;
    if (!isCallArgs(call.args)) return `calls[${i}].args is not an array (nor encoded arguments)`;
  }
  return undefined;
}

export function toCorePluginResult(r: WriterResult, fallbackName: string): PluginResult {
  const base = {
    pluginName: typeof r.pluginName === 'string' && r.pluginName !== '' ? r.pluginName : fallbackName,
    success: r.success === true,
    failureCode: r.failureCode ?? (r.success === true ? '' : FailureCode.PLUGIN_FAILED),
    failureMessage: r.failureMessage ?? '',
  };
  return r.result === undefined ? base : { ...base, result: r.result };
}
