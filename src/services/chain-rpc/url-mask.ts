// How an RPC URL is shown in errors, logs and progress (docs/ingest.md § Pointing it at a provider). Providers
// put the API key in the userinfo (`https://user:KEY@host`), in a query parameter (`?apikey=KEY`) or as a
// path segment (`https://host/v2/KEY`): the password, every query value and every path segment that looks
// like a key (16 or more letters, digits, `-` or `_`, with a digit in it) become `***`. Pure and total.

const KEY_LIKE = /^(?=.*\d)[A-Za-z0-9_-]{16,}$/;

/**
 * Whether `url` holds something that may be a key: a user or password, any query value, or a key-like path
 * segment (what maskRpcUrl hides, and a user name alone). Such a URL never travels in a task (docs/ingest.md
 * § Where the URL lives); an unparseable one counts as holding one.
 */
export function rpcUrlHasKey(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return true;
  }
  return (
    parsed.username !== '' ||
    parsed.password !== '' ||
    parsed.search !== '' ||
    parsed.pathname.split('/').some((seg) => KEY_LIKE.test(seg))
  );
}

export function maskRpcUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(an unparseable URL)';
  }
  if (parsed.password !== '') parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) parsed.searchParams.set(key, '***');
  parsed.pathname = parsed.pathname
    .split('/')
    .map((seg) => (KEY_LIKE.test(seg) ? '***' : seg))
    .join('/');
  return parsed.toString().replace(/%2A%2A%2A/g, '***');
}
