// The client side of a raw frame ping-pong (bench/calls.ts): sends ExecuteCall frames of a no-op call
// with the executor's codec over a connected socket, keeps `inflight` in flight, and counts the answers.
// One driver for every echo server (the Node one in bench/calls.ts, python_pingpong.py), so their rows
// measure the servers and the transport, not two copies of the loop.

import type { Socket } from 'node:net';
import { FrameDecoder, FrameWriter } from '../../src/executor/frame-codec.js';

/** Returns `run(total)`: sends `total` calls, `inflight` at a time; resolves with the elapsed ms. */
export function framePingPong(sock: Socket, inflight: number): (total: number) => Promise<number> {
  const decoder = new FrameDecoder();
  const writer = new FrameWriter(sock);
  let round = 0;
  return (total) =>
    new Promise<number>((resolve) => {
      const t0 = performance.now();
      const r = round++;
      let next = 0;
      let done = 0;
      const submit = (): void => {
        const i = next++;
        writer.send({
          type: 'ExecuteCall',
          taskId: 't',
          callId: `t/${r}/${i}`,
          attempt: 1,
          function: 'noop',
          args: [],
          codeEpoch: 'e',
          budgetMs: 5000,
        });
      };
      const onData = (chunk: Buffer): void => {
        for (const raw of decoder.pushRaw(chunk)) {
          JSON.parse(raw);
          done++;
          if (next < total) submit();
          if (done === total) {
            sock.off('data', onData);
            resolve(performance.now() - t0);
          }
        }
      };
      sock.on('data', onData);
      for (let i = 0; i < Math.min(inflight, total); i++) submit();
    });
}
