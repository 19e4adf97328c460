#!/usr/bin/env node
// Writes the files generated from the config field table (src/kernel/config-fields/, docs/configuration.md
// § Adding a field): the JSON Schema of blockx.config.yaml, the TS types of the config sections and
// docs/configuration.md. Usage: `node scripts/gen-config.mjs`. scripts/check-generated.mjs renders the
// same files in memory and fails when a committed one differs.
//
// The renderers are TypeScript (pure functions in src/kernel/config-fields/render*.ts); this script loads
// them with tsx, so it needs no build, and formats the output with the repository's prettier settings,
// so `prettier --check` and this check agree.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RENDER_MODULE = '../src/kernel/config-fields/render.ts';

/** Loads the renderers through tsx (tests pass their own loader). */
async function loadWithTsx() {
  const { tsImport } = await import('tsx/esm/api');
  return tsImport(RENDER_MODULE, import.meta.url);
}

async function format(text, file) {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(join(ROOT, file))) ?? {};
  return prettier.format(text, { ...options, filepath: join(ROOT, file) });
}

/** Every generated file as { file (repo-relative), text }, formatted as committed. */
export async function renderConfigArtefacts(load = loadWithTsx) {
  const { configArtefacts } = await load();
  const out = [];
  for (const { file, text, format: pretty = true } of configArtefacts())
    out.push({ file, text: pretty ? await format(text, file) : text });
  return out;
}

/** Human-readable differences between the committed files under `root` and rendered `artefacts`. */
export function compareConfigArtefacts(root, artefacts) {
  const problems = [];
  for (const { file, text } of artefacts) {
    let have;
    try {
      have = readFileSync(join(root, file), 'utf8');
    } catch {
      problems.push(`missing: ${file}`);
      continue;
    }
    if (have !== text) problems.push(`differs: ${file}`);
  }
  return problems;
}

/** Renders afresh and compares with the committed files under `root`. */
export async function diffConfigArtefacts(root = ROOT, load = loadWithTsx) {
  return compareConfigArtefacts(root, await renderConfigArtefacts(load));
}

async function main() {
  for (const { file, text } of await renderConfigArtefacts()) {
    writeFileSync(join(ROOT, file), text);
    console.log(`gen-config: wrote ${file}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`gen-config: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
