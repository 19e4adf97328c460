// Reads one sample of a prom-client registry (collect() callbacks run, as on a scrape). Not a test file.
import type { Registry } from 'prom-client';

/**
 * The value of the series `series` (default: the family name; `<name>_count`, `_sum`, `_bucket` for a
 * histogram) of family `family` whose labels include `labels`; undefined when there is none.
 */
export async function sample(
  registry: Registry,
  family: string,
  labels: Readonly<Record<string, string>> = {},
  series: string = family,
): Promise<number | undefined> {
  const metric = registry.getSingleMetric(family);
  if (metric === undefined) throw new Error(`no metric family ${family} in the registry`);
  const { values } = await metric.get();
  const hit = values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? family) === series &&
      Object.entries(labels).every(([k, x]) => String((v.labels as Record<string, unknown>)[k]) === x),
  );
  return hit?.value;
}

/** Count and sum of a histogram series. */
export async function histogram(
  registry: Registry,
  family: string,
  labels: Readonly<Record<string, string>> = {},
): Promise<{ count: number | undefined; sum: number | undefined }> {
  return {
    count: await sample(registry, family, labels, `${family}_count`),
    sum: await sample(registry, family, labels, `${family}_sum`),
  };
}

/**
 * The value of the sample `series` whose labels include `labels` in a text exposition (label order is
 * prom-client's business, so labels are compared as a set); undefined when there is none.
 */
export function exposedSample(
  text: string,
  series: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== series) continue;
    const found = new Map<string, string>();
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      found.set(pair[1] as string, pair[2] as string);
    }
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) return Number(m[3]);
  }
  return undefined;
}
