// CallListCallConfig: one call of `function` per inner array of `callList`, that array being its arguments.
// The config has already been validated against ../schema.json by the kernel when this runs.
import { defineBuilder, type CallList } from 'blockx/plugin';

export interface CallListCallConfig {
  readonly function: string;
  readonly callList: readonly (readonly unknown[])[];
}

const callListBuilder = defineBuilder<CallListCallConfig>({
  name: 'CallListCallConfig',
  build(_taskCtx, config): CallList {
    return { calls: config.callList.map((args) => ({ function: config.function, args })) };
  },
});

export default callListBuilder;
