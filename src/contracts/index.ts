// The contracts both services share, in one place (docs/architecture.md § Code layout): the heartbeat
// JSON a Worker writes and a Coordinator parses, the registry key prefixes and the key layout
// `<prefix><workerAddr>`, their error codes, the task vocabulary (a task's state, the input a client
// submits, a writer plugin's result in a task's result), and the cluster status view a Coordinator
// reports. Pure data
// and functions: no IO, no clock, no imports but each other and the kernel's base error class, so every
// layer — cores included — may import them.
export * from './call-args.js';
export * from './cluster-status.js';
export * from './errors.js';
export * from './follow-job.js';
export * from './heartbeat.js';
export * from './registry-prefix.js';
export * from './task.js';
export * from './write-fence.js';
