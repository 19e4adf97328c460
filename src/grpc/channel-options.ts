// Channel and server options shared by every BlockX gRPC endpoint.
//
// Keepalive (30 s / 10 s, docs/architecture.md § Protos): each side pings after 30 s without activity and
// drops the connection if the ack takes longer than 10 s. On the Worker this bounds how long a silently dead
// WatchTasks client keeps its stream (the watch-disconnect grace starts only once gRPC sees it closed).
// grpc-js servers do not enforce a minimum client ping interval, so 30 s pings from clients are accepted.
import type { ChannelOptions } from '@grpc/grpc-js';

export const KEEPALIVE_TIME_MS = 30_000;
export const KEEPALIVE_TIMEOUT_MS = 10_000;

/**
 * Largest message either side sends or accepts. grpc-js defaults to 4 MiB inbound, which a
 * ReturnValueResultHandler result (every call output of a task) can exceed; anything larger than this
 * belongs in a table written by a Writer Plugin, not in a TaskResult.
 */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

const common = {
  'grpc.keepalive_time_ms': KEEPALIVE_TIME_MS,
  'grpc.keepalive_timeout_ms': KEEPALIVE_TIMEOUT_MS,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
} as const satisfies ChannelOptions;

/** Options for `new grpc.Server(SERVER_OPTIONS)`. */
export const SERVER_OPTIONS: Readonly<ChannelOptions> = Object.freeze({ ...common });

/**
 * Reconnect backoff of client channels. grpc-js's defaults grow to 120 s, so a Worker that restarted
 * stayed unreachable to a client for seconds after the Coordinator already routed to it (measured: ~8 s
 * without work). 100 ms doubling to at most 2 s reaches a restarted server at once and still does not
 * hammer a dead one (docs/retries.md).
 */
export const RECONNECT_BACKOFF_MS = { initial: 100, max: 2_000 } as const;

/** Options for client constructors (`new WorkerServiceClient(addr, creds, CLIENT_CHANNEL_OPTIONS)`). */
export const CLIENT_CHANNEL_OPTIONS: Readonly<ChannelOptions> = Object.freeze({
  ...common,
  'grpc.initial_reconnect_backoff_ms': RECONNECT_BACKOFF_MS.initial,
  'grpc.max_reconnect_backoff_ms': RECONNECT_BACKOFF_MS.max,
  // Only ping while a call is open: an idle pooled channel need not keep the peer busy.
  'grpc.keepalive_permit_without_calls': 0,
});
