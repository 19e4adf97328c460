// The response rules every dashboard answer follows (docs/dashboard.md § Security), and the framing of
// Server-Sent Events (the WHATWG HTML "server-sent events" section). Pure: no IO.

/**
 * Sent on every response. The page loads only its own files: no inline script or style, no other
 * origin, no framing; `nosniff` makes browsers honour the content types; no CORS header is ever sent,
 * so other origins cannot read the data.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
});

/** Content types by file extension, for the page's files. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
});

/** How long the browser waits before reconnecting a dropped stream (the `retry:` field). */
export const SSE_RETRY_MS = 2_000;

/** One SSE event: `event:` name and the JSON on one `data:` line (JSON.stringify never emits a newline). */
export function sseEvent(name: string, json: string): string {
  return `event: ${name}\ndata: ${json}\n\n`;
}

/** A comment line: ignored by EventSource, it keeps proxies and NATs from closing an idle stream. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** The first bytes of a stream: the reconnect delay. */
export function sseHello(): string {
  return `retry: ${SSE_RETRY_MS}\n\n`;
}
