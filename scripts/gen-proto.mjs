#!/usr/bin/env node
// Regenerates the TypeScript types for proto/blockx/** into src/generated/proto/ with
// @grpc/proto-loader's `proto-loader-gen-types`. Usage: `node scripts/gen-proto.mjs [OUT_DIR]`.
//
// The flags below must describe the same decoding as PROTO_LOADER_OPTIONS in src/grpc/proto.ts (a unit
// test pins that): camelCase field names, int64 as JS numbers (all our int64s are milliseconds, far below
// 2^53), enums as their string names, bytes as Buffer, defaults for omitted fields, virtual oneof fields.
// Output is kept exactly as the tool produces it (plus a header); src/generated is ignored by eslint and
// prettier. scripts/check-generated.mjs regenerates into a temp dir and fails when the tree is stale.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const PROTO_DIR = 'proto';
export const GENERATED_DIR = join('src', 'generated', 'proto');

/** Proto files relative to PROTO_DIR, in a fixed order. */
export const PROTO_FILES = [
  'blockx/worker/v1/worker.proto',
  'blockx/coordinator/v1/coordinator.proto',
  'blockx/bundlecoordinator/v1/bundle_coordinator.proto',
  'blockx/coordinator/v1/admin.proto',
  'blockx/worker/v1/worker_admin.proto',
  'blockx/coordinator/v1/jobs.proto',
];

/** The decoding options, as generator flags. Keep in step with PROTO_LOADER_OPTIONS (src/grpc/proto.ts). */
export const LOADER_FLAGS = ['--longs=Number', '--enums=String', '--bytes=Buffer', '--defaults', '--oneofs'];

const OUTPUT_FLAGS = ['--includeComments', '--grpcLib=@grpc/grpc-js', '--importFileExtension=.js'];

const HEADER =
  '// GENERATED FILE, DO NOT EDIT. Produced by scripts/gen-proto.mjs (proto-loader-gen-types) from proto/.\n' +
  '// Regenerate with `node scripts/gen-proto.mjs`; `node scripts/check-generated.mjs` checks freshness.\n';

function listFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path));
    else out.push(path);
  }
  return out;
}

/** Generates into `outDir` (absolute, or relative to the package root), replacing its contents. */
export function generate(outDir = GENERATED_DIR) {
  const target = resolve(ROOT, outDir);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  const bin = join(
    ROOT,
    'node_modules',
    '@grpc',
    'proto-loader',
    'build',
    'bin',
    'proto-loader-gen-types.js',
  );
  // Run from the package root with a relative include dir so that the "Original file:" comments in the
  // output are the same on every machine.
  const args = [bin, ...LOADER_FLAGS, ...OUTPUT_FLAGS, '-I', PROTO_DIR, '-O', target, ...PROTO_FILES];
  const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) {
    throw new Error(`proto-loader-gen-types failed (exit ${run.status}):\n${run.stderr || run.stdout}`);
  }
  const files = listFiles(target);
  for (const file of files) {
    writeFileSync(file, HEADER + readFileSync(file, 'utf8'));
  }
  return files.map((f) => relative(target, f));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const outDir = process.argv[2] ?? GENERATED_DIR;
    const files = generate(outDir);
    console.log(`gen-proto: wrote ${files.length} files to ${outDir}`);
  } catch (err) {
    console.error(`gen-proto: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
