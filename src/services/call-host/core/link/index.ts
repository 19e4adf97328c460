// The executor link core: the handshake, the in-flight table, the queue and "link lost → fail all in
// flight", without the socket (README.md). The shell is adapters/executor-link.ts.
export type { ConnId, LinkCommand, LinkCommandType } from './commands.js';
export { constantTimeEqual } from './frames.js';
export { LinkCore, type LinkCoreOptions } from './link-core.js';
export type * from './types.js';
