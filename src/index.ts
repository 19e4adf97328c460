// Public API of the `blockx` package: types for function and plugin authors, the kernel, and the client.
export * from './kernel/errors.js';
