// Masking secrets in anything BlockX prints or logs: the one helper every printer of a config value, a
// storage URL or an error message about one goes through (issue 16, item 7).
//
//   - A URL's password: `postgres://user:pw@host/db` → `postgres://user:***@host/db`, wherever a URL
//     appears in a string (a message may quote one).
//   - A URL query parameter named like a secret: `?password=pw&sslmode=require` → `?password=***&…`.
//   - In a structured value (a config, a log object): every field whose NAME looks like a secret
//     (password, passwd, pwd, secret, token, apiKey, credentials, privateKey…) is replaced by `***`,
//     whatever its type; every other string goes through the URL masking.
// Pure and total: never throws, never mutates its input; cycles are cut.

export const REDACTED = '***';

/** Field names (and query parameter names) whose values are secrets. */
const SECRET_NAME =
  /password|passwd|passphrase|^pass$|^pwd$|secret|token|credential|api[-_]?key|private[-_]?key|auth[-_]?key/i;

// scheme://user:password@  — the password may not hold '@', '/', '?', '#' or whitespace unencoded (RFC 3986).
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*:)([^\s@/?#]+)(@)/gi;
// ?name=value or &name=value, for secret-looking names.
const QUERY_SECRET = /([?&]([a-z0-9_.-]+)=)([^&#\s]*)/gi;

/** `name` looks like the name of a secret (password, token, secret…). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Masks URL passwords and secret query parameters inside `text`. */
export function redactText(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text
    .replace(URL_PASSWORD, (_m, head: string, _pw: string, at: string) => `${head}${REDACTED}${at}`)
    .replace(QUERY_SECRET, (m, head: string, name: string) =>
      isSecretName(name) ? `${head}${REDACTED}` : m,
    );
}

/** A copy of `value` with secret-named fields replaced by `***` and every string URL-masked. */
export function redactSecrets<T>(value: T): T {
  return redact(value, new WeakSet()) as T;
}

function redact(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, seen));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretName(k) && v !== undefined && v !== null && v !== '' ? REDACTED : redact(v, seen);
  }
  return out;
}
