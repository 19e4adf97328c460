// JsonLinesResultHandler: an example Writer Plugin of your own. It writes the outputs of one block's task
// (calls that returned an array contribute each element; null outputs nothing) as JSON Lines to
// <dir>/<chainId>/<number>.jsonl.
//
// A writer must write all or nothing, and a task that runs again must not write twice: the file is
// written under a temporary name and renamed over the block's file, so a reader sees the old file or the
// whole new one, and a retried task replaces the block's file instead of appending to it.
//
// It imports BlockX only through `blockx/plugin`; BlockX resolves that to its own copy when it loads the
// package, wherever the package sits.
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineWriter, PluginError, type WriterResult } from 'blockx/plugin';

/** The task config, as ../schema.json describes it (the schema fills in `dir`). */
interface JsonLinesConfig {
  readonly dir: string;
  readonly chainId: number;
  readonly block: { readonly number: number };
}

export default defineWriter<JsonLinesConfig>({
  name: 'JsonLinesResultHandler',
  async execute(taskCtx, config, outputs): Promise<WriterResult[]> {
    const lines: string[] = [];
    for (const [i, output] of outputs.entries()) {
      for (const value of Array.isArray(output) ? output : [output]) {
        if (value === null || value === undefined) continue;
        const line = JSON.stringify(value);
        if (line === undefined) throw new PluginError('NOT_JSON', `output ${i} is not a JSON value`);
        lines.push(line);
      }
    }
    const folder = path.resolve(config.dir, String(config.chainId));
    const file = path.join(folder, `${config.block.number}.jsonl`);
    await mkdir(folder, { recursive: true });
    const temporary = `${file}.${taskCtx.taskId}.tmp`;
    await writeFile(temporary, lines.map((l) => `${l}\n`).join(''));
    await rename(temporary, file);
    return [{ pluginName: 'JsonLinesResultHandler', success: true, result: { file, lines: lines.length } }];
  },
});
