// ReturnValueResultHandler: writes nothing to storage; the array of call outputs becomes the plugin
// result, which the worker returns in TaskResult.executeResult.pluginResults[0].result (UTF-8 JSON bytes).
import { defineWriter, type WriterResult } from 'blockx/plugin';

export type ReturnValueResultHandlerConfig = Record<string, never>;

const PLUGIN_NAME = 'ReturnValueResultHandler';

const returnValueWriter = defineWriter<ReturnValueResultHandlerConfig>({
  name: PLUGIN_NAME,
  async execute(_taskCtx, _config, outputs): Promise<WriterResult[]> {
    return [{ pluginName: PLUGIN_NAME, success: true, result: [...outputs] }];
  },
});

export default returnValueWriter;
