#!/usr/bin/env node
// Fails (exit 1) when a generated file is stale:
//   - src/generated/proto/ is not what scripts/gen-proto.mjs would produce from proto/;
//   - the files generated from the config field table (the config JSON Schema, the config section types,
//     docs/configuration.md) are not what scripts/gen-config.mjs would write.
// Usage: `node scripts/check-generated.mjs [GENERATED_DIR]` (the argument, for tests, moves the proto
// check only). It regenerates in a temp dir or in memory and compares; nothing in the repo is written.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_DIR, ROOT, generate } from './gen-proto.mjs';
import { diffConfigArtefacts } from './gen-config.mjs';

function listFiles(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path));
    else out.push(path);
  }
  return out;
}

/** Returns a list of human-readable differences between `committedDir` and a fresh generation. */
export function diffGenerated(committedDir = GENERATED_DIR) {
  const committed = resolve(ROOT, committedDir);
  const fresh = mkdtempSync(join(tmpdir(), 'blockx-gen-proto-'));
  try {
    generate(fresh);
    const want = new Map(listFiles(fresh).map((f) => [relative(fresh, f), readFileSync(f, 'utf8')]));
    const have = new Map(listFiles(committed).map((f) => [relative(committed, f), readFileSync(f, 'utf8')]));
    const problems = [];
    for (const [file, text] of want) {
      if (!have.has(file)) problems.push(`missing: ${file}`);
      else if (have.get(file) !== text) problems.push(`differs: ${file}`);
    }
    for (const file of have.keys()) {
      if (!want.has(file)) problems.push(`extra (not generated from proto/): ${file}`);
    }
    return problems;
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

async function main() {
  let failed = false;
  const dir = process.argv[2] ?? GENERATED_DIR;
  const problems = diffGenerated(dir);
  if (problems.length > 0) {
    console.error(
      `check-generated: ${dir} is stale relative to proto/ (${problems.length} file(s)):\n` +
        problems.map((p) => `  - ${p}`).join('\n') +
        '\nRun `node scripts/gen-proto.mjs` and commit the result.',
    );
    failed = true;
  } else console.log(`check-generated: ${dir} is up to date`);

  const configProblems = await diffConfigArtefacts();
  if (configProblems.length > 0) {
    console.error(
      `check-generated: files generated from the config field table are stale (${configProblems.length}):\n` +
        configProblems.map((p) => `  - ${p}`).join('\n') +
        '\nRun `node scripts/gen-config.mjs` and commit the result.',
    );
    failed = true;
  } else console.log('check-generated: the config schema, types and docs/configuration.md are up to date');
  if (failed) process.exit(1);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`check-generated: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
