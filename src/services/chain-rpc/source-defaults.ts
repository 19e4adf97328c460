// The defaults of a source's request limits and finality, written once (docs/ingest.md § Settings). The
// `blockx ingest` flags take them as their defaults; the writer's task config carries every value, so a
// Worker never applies a default of its own.
export const SOURCE_DEFAULTS = Object.freeze({
  /** Blocks behind the head left out when the range has no end. */
  finality: 0,
  limits: Object.freeze({
    maxConcurrentRequests: 8,
    requestsPerSecond: 0,
    requestTimeoutMs: 10_000,
    maxAttempts: 5,
    initialBackoffMs: 100,
    maxBackoffMs: 5_000,
    maxRetryAfterMs: 60_000,
  }),
});
