// The README's sample function (README.md § Tasks): a CallListCallConfig task with `callList: [["ct2"],
// ["blockx"]]` calls it once per inner array, so it returns "hello, ct2" and "hello, blockx".
import type { CallContext } from 'blockx/function';

export default async function helloWorld(ctx: CallContext, name: string): Promise<string> {
  ctx.log.debug('greeting', { name });
  return `hello, ${name}`;
}
