// Shared by the executor socket tests (not a test file itself): a client that connects to an executor
// socket the way an impostor would, records every byte it receives and can say Hello with any secret.
import { connect, type Socket } from 'node:net';
import { FrameWriter } from '../../src/executor/frame-codec.js';
import { PROTOCOL_VERSION } from '../../src/executor/protocol.js';

export class SocketClient {
  /** Everything the server sent (an impostor must get nothing: no ExecuteCall, no DefineEpoch). */
  readonly received: Buffer[] = [];
  readonly closed: Promise<void>;
  private readonly writer: FrameWriter;

  private constructor(readonly socket: Socket) {
    this.writer = new FrameWriter(socket);
    socket.on('data', (chunk: Buffer) => this.received.push(chunk));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static async connect(path: string): Promise<SocketClient> {
    const socket = connect(path);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    return new SocketClient(socket);
  }

  get receivedBytes(): number {
    return this.received.reduce((n, b) => n + b.length, 0);
  }

  send(message: object): void {
    this.writer.send(message);
    this.writer.flush();
  }

  /** A Hello like the real executor's; `secret` undefined: none at all. */
  hello(secret: string | undefined): void {
    this.send({
      type: 'Hello',
      protocolVersion: PROTOCOL_VERSION,
      executorVersion: '0.0.0-impostor',
      pid: process.pid,
      threads: 64,
      functionsDir: '/nowhere',
      ...(secret !== undefined ? { secret } : {}),
    });
  }

  heartbeat(): void {
    this.send({
      type: 'Heartbeat',
      seq: 0,
      pid: process.pid,
      inflight: 0,
      queued: 0,
      threads: 64,
      epochs: 0,
      rssBytes: 1,
    });
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Any 64-hex-digit run: the shape of a spawn secret, which no log line may carry. */
export const SECRET_SHAPE = /[0-9a-f]{64}/;
