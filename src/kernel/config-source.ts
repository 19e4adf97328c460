// Finding and parsing the config file while keeping source positions.
//
// cosmiconfig only *locates* the file (explicit path, BLOCKX_CONFIG, or a search from the cwd up to the
// project root). We then parse the text ourselves with `yaml`'s parseDocument so every node keeps its
// range: ajv reports JSON paths, and `positionOf` turns a path back into file:line:column. JSON is YAML,
// so package.json#blockx goes through the same parser and paths are re-rooted under `blockx`.
import { readFileSync } from 'node:fs';
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

/** Reads and parses a config file. YAML syntax errors and duplicate keys become ConfigError issues. */
export function readConfigSource(file: string): ConfigSource {
  return parseConfigText(readFileSync(file, 'utf8'), file);
}

/** Parses config text as if read from `file` (the name decides whether it is a package.json). */
export function parseConfigText(text: string, file: string): ConfigSource {
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
  const value = root.length ? (doc.toJS() as Record<string, unknown>)?.blockx : doc.toJS();
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
