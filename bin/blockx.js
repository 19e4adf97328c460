#!/usr/bin/env node
// The `blockx` command. The TypeScript sources are compiled to dist/ by `npm run build`,
// which `npm ci` runs through the `prepare` script.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('blockx: dist/ is missing; run `npm run build` (npm ci runs it for you)\n');
  process.exit(2);
}
// V8's tuning for this command (src/cli/v8-flags.ts), before the CLI's modules load.
const { selfV8Flags } = await import(new URL('../dist/cli/v8-flags.js', import.meta.url).href);
const { setFlagsFromString } = await import('node:v8');
for (const flag of selfV8Flags(process.argv.slice(2), process.execArgv)) setFlagsFromString(flag);
// The lean AsyncResource#bind, process-wide, before any gRPC call (src/grpc/lean-bind.ts): the entry
// points install it, constructing a client does not.
const { installLeanAsyncResourceBind } = await import(
  new URL('../dist/grpc/lean-bind.js', import.meta.url).href
);
installLeanAsyncResourceBind();
const { main } = await import(entry.href);
process.exitCode = await main(process.argv.slice(2));
