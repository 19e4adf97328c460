// The one task vocabulary (src/contracts/task.ts) and the names the public subpaths give it: every room
// names the same TaskState, TaskInput and PluginResult, and the names users already import keep working.
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as client from '../../../src/client/index.js';
import type * as clientTypes from '../../../src/client/index.js';
import { isRecentTaskState, type RecentTaskState } from '../../../src/contracts/dashboard.js';
import {
  isTerminalState,
  TaskState,
  type PluginResult,
  type TaskInput,
  type TerminalTaskState,
  type WriterResult,
} from '../../../src/contracts/task.js';
import type { TaskRunResult } from '../../../src/client/types.js';
import type * as domain from '../../../src/grpc/domain-types.js';
import * as root from '../../../src/index.js';
import type * as rootTypes from '../../../src/index.js';
import type * as plugin from '../../../src/plugin.js';
import type { RecentTaskRecordState } from '../../../src/services/worker/core/recent-tasks.js';
import * as workerCore from '../../../src/services/worker/core/index.js';

describe('TaskState', () => {
  it('each state is its own name, in the order of the proto enum', () => {
    expect(Object.entries(TaskState)).toEqual(
      ['UNSPECIFIED', 'ALLOCATED', 'RUNNING', 'SUCCEEDED', 'FAILED'].map((s) => [s, s]),
    );
  });

  it.each([
    [TaskState.UNSPECIFIED, false],
    [TaskState.ALLOCATED, false],
    [TaskState.RUNNING, false],
    [TaskState.SUCCEEDED, true],
    [TaskState.FAILED, true],
  ] as const)('isTerminalState(%s) is %s', (state, terminal) => {
    expect(isTerminalState(state)).toBe(terminal);
  });

  it('the Worker core, the client and the root entry hand out the one definition', () => {
    expect(workerCore.TaskState).toBe(TaskState);
    expect(workerCore.isTerminalState).toBe(isTerminalState);
    expect(client.TaskState).toBe(TaskState);
    expect(client.isTerminalState).toBe(isTerminalState);
    expect(root.TaskState).toBe(TaskState);
    expect(root.isTerminalState).toBe(isTerminalState);
  });

  it.each([
    ['UNSPECIFIED', false],
    ['ALLOCATED', true],
    ['RUNNING', true],
    ['SUCCEEDED', true],
    ['FAILED', true],
    ['EXPLODED', false],
    ['running', false],
  ])('isRecentTaskState(%s) is %s', (state, recent) => {
    expect(isRecentTaskState(state)).toBe(recent);
  });

  it('the narrower states are subsets of it', () => {
    expectTypeOf<TaskRunResult['state']>().toEqualTypeOf<TerminalTaskState>();
    expectTypeOf<RecentTaskState>().toEqualTypeOf<Exclude<TaskState, 'UNSPECIFIED'>>();
    expectTypeOf<RecentTaskRecordState>().toEqualTypeOf<'RUNNING' | 'SUCCEEDED' | 'FAILED'>();
    expectTypeOf<domain.TaskState>().toEqualTypeOf<TaskState>();
    expectTypeOf<clientTypes.TaskState>().toEqualTypeOf<TaskState>();
    expectTypeOf<rootTypes.TaskState>().toEqualTypeOf<TaskState>();
  });
});

describe('public names of the task shapes', () => {
  it('blockx/client names the task result shapes of the contracts', () => {
    expectTypeOf<clientTypes.TaskInput>().toEqualTypeOf<TaskInput>();
    expectTypeOf<clientTypes.PluginResult>().toEqualTypeOf<PluginResult>();
    expectTypeOf<domain.TaskInput>().toEqualTypeOf<TaskInput>();
  });

  it("blockx/plugin's PluginResult stays the writer's report (a deprecated alias of WriterResult)", () => {
    expectTypeOf<plugin.PluginResult>().toEqualTypeOf<plugin.WriterResult>();
    expectTypeOf<rootTypes.PluginResult>().toEqualTypeOf<plugin.WriterResult>();
    // A writer may leave the failure fields out; the task result's shape always has them.
    expectTypeOf<{ pluginName: string; success: true }>().toMatchTypeOf<plugin.WriterResult>();
    expectTypeOf<{ pluginName: string; success: true }>().not.toMatchTypeOf<PluginResult>();
    expectTypeOf<PluginResult>().toMatchTypeOf<plugin.WriterResult>();
    // One vocabulary: the writer's report is the contracts' WriterResult, which PluginResult completes.
    expectTypeOf<plugin.WriterResult>().toEqualTypeOf<WriterResult>();
  });
});
