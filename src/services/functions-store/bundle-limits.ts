// The size limits of a deployed bundle (docs/functions-deploy.md § Limits), all named here.
//
// A bundle is one etcd value. etcd refuses a request above its --max-request-bytes (1.5 MiB by default)
// and keeps every value in memory on every member, so the stored (compressed) bundle stays well below
// that: 1 MiB leaves room for the key, the transaction and etcd's own framing. The uncompressed cap is
// what a reader is willing to inflate (a decompression bomb is cut off at it, never buffered whole).

/** Stored (gzip) size of one bundle. Below etcd's default 1.5 MiB request limit. */
export const MAX_BUNDLE_STORED_BYTES = 1024 * 1024;
/** Sum of the function sources' UTF-8 bytes, before compression. */
export const MAX_BUNDLE_SOURCE_BYTES = 8 * 1024 * 1024;
/** One function file. */
export const MAX_BUNDLE_FILE_BYTES = 2 * 1024 * 1024;
/** Function files in one bundle. */
export const MAX_BUNDLE_FILES = 1_000;
/** Versions the index keeps; deploying one more prunes the oldest (never the current one). */
export const MAX_KEPT_VERSIONS = 10;
/** Stored size of the index and the current pointer (small JSON; a larger value is refused as corrupt). */
export const MAX_INDEX_BYTES = 64 * 1024;
