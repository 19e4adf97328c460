// Finding and parsing the config file while keeping source positions.
//
// cosmiconfig only *locates* the file (explicit path, BLOCKX_CONFIG, or a search from the cwd up to the
// project root). We then parse the text ourselves with `yaml`'s parseDocument so every node keeps its
// range: ajv reports JSON paths, and `positionOf` turns a path back into file:line:column. JSON is YAML,
// so package.json#blockx goes through the same parser and paths are re-rooted under `blockx`.
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { cosmiconfigSync } from 'cosmiconfig';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { ConfigError, ConfigNotFoundError, type ConfigIssue } from './errors.js';

export const CONFIG_SEARCH_PLACES = [
  'blockx.config.yaml',
  'blockx.config.yml',
  '.blockxrc.yaml',
  '.blockxrc.yml',
  'package.json',
];

export interface ConfigSource {
  /** Absolute path of the file. */
  file: string;
  /** The parsed value (plain JS) of the BlockX section. */
  value: unknown;
  /** Source position of a config path (segments as in the value), or undefined when not in the file. */
  positionOf(
    pathSegments: readonly (string | number)[],
    opts?: { key?: boolean },
  ): { line: number; column: number } | undefined;
}

/** Locates the config: an explicit path wins, then BLOCKX_CONFIG, then a search from `cwd`. */
export function locateConfig(opts: { explicitPath?: string; env?: NodeJS.ProcessEnv; cwd?: string }): string {
  const cwd = opts.cwd ?? process.cwd();
  const explicit = opts.explicitPath ?? opts.env?.BLOCKX_CONFIG;
  if (explicit) {
    const file = path.resolve(cwd, explicit);
    try {
      readFileSync(file);
    } catch (err) {
      throw new ConfigNotFoundError(cwd, `config file ${file} cannot be read: ${(err as Error).message}`);
    }
    return file;
  }
  const explorer = cosmiconfigSync('blockx', {
    searchPlaces: CONFIG_SEARCH_PLACES,
    searchStrategy: 'project',
    packageProp: 'blockx',
    // We parse ourselves; the loader only has to say "found".
    loaders: { '.yaml': () => true, '.yml': () => true, noExt: () => true },
    cache: false,
  });
  const found = explorer.search(cwd);
  if (!found || found.isEmpty) throw new ConfigNotFoundError(cwd);
  return found.filepath;
}

/**
 * Upper bound on a config file. A real config is a few KiB; a bigger file is a mistake or an attack, and
 * parsing it would take seconds and hundreds of MiB before any useful error.
 */
export const MAX_CONFIG_BYTES = 10 * 1024 * 1024;

/** A ConfigError with one issue about the file as a whole (it could not be loaded at all). */
function unloadable(file: string, message: string, cause?: unknown): ConfigError {
  return new ConfigError([{ source: 'file', path: '', file, message }], { cause });
}

/**
 * Reads and parses a config file. Every way a file can fail to load — unreadable, above
 * MAX_CONFIG_BYTES, YAML syntax errors, duplicate keys, an alias bomb — is a ConfigError naming the file
 * (the CLI exits 2 with it), never an unexpected error.
 */
export function readConfigSource(file: string): ConfigSource {
  let text: string;
  try {
    const { size } = statSync(file);
    if (size > MAX_CONFIG_BYTES) {
      throw unloadable(file, `config file is ${size} bytes, above the limit of ${MAX_CONFIG_BYTES} (10 MiB)`);
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw unloadable(file, `config file cannot be read: ${firstLine((err as Error).message)}`, err);
  }
  return parseConfigText(text, file);
}

/** Parses config text as if read from `file` (the name decides whether it is a package.json). */
export function parseConfigText(text: string, file: string): ConfigSource {
  if (text.length > MAX_CONFIG_BYTES) {
    throw unloadable(
      file,
      `config text is ${text.length} characters, above the limit of ${MAX_CONFIG_BYTES}`,
    );
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    uniqueKeys: true,
    prettyErrors: false,
    keepSourceTokens: false,
  });
  const issues: ConfigIssue[] = doc.errors.map((e) => {
    const pos = lineCounter.linePos(e.pos[0]);
    return {
      source: 'file',
      path: '',
      file,
      line: pos.line,
      column: pos.col,
      message:
        e.code === 'DUPLICATE_KEY'
          ? `duplicate key: ${firstLine(e.message)}`
          : `YAML syntax error: ${firstLine(e.message)}`,
    };
  });
  if (issues.length > 0) throw new ConfigError(issues);

  const root: readonly (string | number)[] = path.basename(file) === 'package.json' ? ['blockx'] : [];
  let js: unknown;
  try {
    // yaml caps alias expansion (maxAliasCount 100) and throws on a "billion laughs" document.
    js = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw unloadable(file, `YAML cannot be expanded: ${firstLine((err as Error).message)}`, err);
  }
  const value = root.length ? (js as Record<string, unknown> | null)?.blockx : js;
  return {
    file,
    value,
    positionOf(segments, opts) {
      const found = findNode(doc, [...root, ...segments], opts?.key ?? false);
      if (!found?.range) return undefined;
      const pos = lineCounter.linePos(found.range[0]);
      return { line: pos.line, column: pos.col };
    },
  };
}

function firstLine(message: string): string {
  return message.split('\n')[0] ?? message;
}

/**
 * Walks the document along `segments`. Returns the value node, or with `key: true` the key node of the
 * last segment (so "unknown key" points at the key). When the path runs off the document (a value that is
 * missing), returns the deepest node that exists: the error then points at the enclosing object.
 */
function findNode(doc: Document, segments: readonly (string | number)[], key: boolean): Node | undefined {
  let node: unknown = doc.contents;
  let last: Node | undefined = (doc.contents as Node | null) ?? undefined;
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const isLast = i === segments.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg),
      );
      if (!pair) return last;
      if (isLast && key) return pair.key as Node;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
    } else if (isSeq(node) && /^\d+$/.test(String(seg))) {
      node = node.items[Number(seg)];
    } else {
      return last;
    }
    if (node && typeof node === 'object' && 'range' in node) last = node as Node;
    else return last;
  }
  return last;
}
