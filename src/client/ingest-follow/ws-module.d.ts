// The members of the `ws` package (its WebSocket client) that ./new-heads.ts uses, typed here: the package
// ships no types of its own, and these few are all BlockX calls.
declare module 'ws' {
  import type { EventEmitter } from 'node:events';

  class WebSocket extends EventEmitter {
    constructor(url: string, options?: { readonly handshakeTimeout?: number });
    send(data: string): void;
    terminate(): void;
    on(event: 'open', listener: () => void): this;
    on(event: 'message', listener: (data: Buffer) => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: 'close', listener: (code: number) => void): this;
  }
  export default WebSocket;
}
