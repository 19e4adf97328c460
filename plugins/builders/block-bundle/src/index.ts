// BlockBundleCallConfig (bundleScan): one call of `function` per row of `table` across a bundle of
// blocks, keeping only rows of canonical blocks (see bundle-calls.ts).
//
// Two forms, one scan: build() returns the whole call list during the Builder phase; with
// `stream.enabled` the Worker instead calls stream() during the Calls phase (streams(config) tells it
// which), and calls are dispatched while the scan goes on. The config has already been validated against
// ../schema.json, its defaults filled in by the kernel.
import { defineBuilder, type CallList, type CallSpec } from 'blockx/plugin';
import { bundleCalls, type BlockBundleCallConfig } from './bundle-calls.js';
import { BlockBundleError, BlockBundleErrorCode } from './errors.js';

export { bundleOf, bundleRange, DEFAULT_BUNDLE_SIZE } from './bundle-range.js';
export type { BlockBundleCallConfig, BlockBundleCallConfigInput, BundleCallBlock } from './bundle-calls.js';
export { BlockBundleError, BlockBundleErrorCode } from './errors.js';

const blockBundleBuilder = defineBuilder<BlockBundleCallConfig>({
  name: 'BlockBundleCallConfig',

  streams(config) {
    return config.stream.enabled;
  },

  async build(taskCtx, config, io): Promise<CallList> {
    if (config.stream.enabled) {
      throw new BlockBundleError(
        BlockBundleErrorCode.STREAM_ENABLED,
        'BlockBundleCallConfig has stream.enabled: its calls are produced by stream() during the Calls ' +
          'phase, so the orchestrator must call stream() instead of build()',
        { chainId: config.chainId, bundle: config.bundle },
      );
    }
    const calls: CallSpec[] = [];
    for await (const call of bundleCalls(taskCtx.signal, config, io)) calls.push(call);
    // An abort midway fails the build rather than returning part of the list.
    taskCtx.signal.throwIfAborted();
    return { calls };
  },

  stream(taskCtx, config, io): AsyncIterable<CallSpec> {
    return bundleCalls(taskCtx.signal, config, io);
  },
});

export default blockBundleBuilder;
