// Canonical JSON: the JSON text of a value with object keys sorted at every level, so equal values give
// equal strings. Used wherever a JSON value is a map key (the Worker's task read cache, the executor's
// read copies). Agrees with JSON.stringify on what a value means: `toJSON` is honoured (a Date is its
// ISO string), object members that JSON drops (undefined, functions, symbols) are dropped, and such
// array elements read as null.

/** Canonical JSON of `value`. Throws what JSON.stringify throws (bigint, cycles). */
export function canonicalJson(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return canonicalJson(toJSON.call(value));
    if (Array.isArray(value))
      return `[${value.map((v) => (dropped(v) ? 'null' : canonicalJson(v))).join(',')}]`;
    const record = value as Record<string, unknown>;
    const parts: string[] = [];
    for (const key of Object.keys(record).sort()) {
      const v = record[key];
      if (!dropped(v)) parts.push(`${JSON.stringify(key)}:${canonicalJson(v)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function dropped(v: unknown): boolean {
  return v === undefined || typeof v === 'function' || typeof v === 'symbol';
}
