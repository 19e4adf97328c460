// Turns a function module (its JavaScript, an ES module) into a module that makes fresh instances of it:
// the per-task module instance of `executor.isolation: task` (docs/security.md, "Task isolation") at the
// cost of a function call, not an import per task (docs/executor.md, "Module instances").
//
// The result is one ES module, imported once per thread and epoch under the function's own URL:
//
//   export function __blockx_instantiate() {<the module's statements: import declarations blanked out,
//   `export` keywords removed, in place>
//   ;return { get default() { return …; }, get other() { return other; } };
//   }
//   <the module's import declarations, verbatim>
//   import * as __blockx_re0 from '…';      (one per `export … from '…'`)
//   //# sourceMappingURL=…                   (the compiler's map, moved to the end)
//
// Each call of `__blockx_instantiate` runs the module's statements again with fresh module-scope
// bindings: a new instance. Import declarations are hoisted, so at the bottom they still bind before
// any statement runs, keeping their live bindings, their link errors (a missing named export) and their
// evaluation order; the statements see them through the enclosing module scope. `import.meta` and
// `import()` belong to the function's URL, as before. The imported modules themselves are instantiated
// once per thread and epoch (shared, as docs/security.md says). A module with top-level `await` gets an
// async factory.
//
// Text is only blanked or replaced where it stands, so every line keeps its number and only columns on
// the first line and on an `export default <expression>` line move: the compiler's source map still
// applies. Pure: text in, text out.

import { parse, type Node, type Pattern, type Program } from 'acorn';

/** The export of the instance module that makes one instance. */
export const INSTANTIATE_EXPORT = '__blockx_instantiate';

export type InstanceModule =
  | { readonly ok: true; readonly code: string; readonly async: boolean }
  | { readonly ok: false; readonly message: string };

interface Edit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** `source` must be an ES module's JavaScript (TypeScript already compiled). */
export function instanceModuleSource(source: string): InstanceModule {
  let program: Program;
  try {
    program = parse(source, { ecmaVersion: 'latest', sourceType: 'module', allowHashBang: true });
  } catch (err) {
    return { ok: false, message: (err as Error).message }; // acorn's message ends with (line:column)
  }
  const edits: Edit[] = [];
  const blank = (start: number, end: number) =>
    edits.push({ start, end, text: source.slice(start, end).replace(/[^\n\r\u2028\u2029]/g, ' ') });
  const imports: string[] = [];
  /** Exported name → the expression the instance's getter returns. */
  const exported = new Map<string, string>();
  /** Namespaces whose every name but `default` the instance re-exports (`export * from`). */
  const stars: string[] = [];
  const reexport = (node: Node & { source: Node }): string => {
    const ns = `__blockx_re${imports.length}`;
    imports.push(`import * as ${ns} from ${source.slice(node.source.start, node.end)}`);
    return ns;
  };

  if (source.startsWith('#!')) blank(0, source.search(/[\n\r\u2028\u2029]|$/));
  for (const node of program.body) {
    switch (node.type) {
      case 'ImportDeclaration':
        imports.push(source.slice(node.start, node.end));
        blank(node.start, node.end);
        break;
      case 'ExportAllDeclaration': {
        const ns = reexport(node);
        if (node.exported) exported.set(exportName(node.exported), ns);
        else stars.push(ns);
        blank(node.start, node.end);
        break;
      }
      case 'ExportNamedDeclaration':
        if (node.declaration) {
          blank(node.start, node.declaration.start);
          for (const name of declaredNames(node.declaration)) exported.set(name, name);
        } else {
          const ns = node.source ? reexport(node as typeof node & { source: Node }) : undefined;
          for (const s of node.specifiers) {
            const local = exportName(s.local);
            exported.set(exportName(s.exported), ns ? `${ns}[${JSON.stringify(local)}]` : local);
          }
          blank(node.start, node.end);
        }
        break;
      case 'ExportDefaultDeclaration': {
        const d = node.declaration;
        if ((d.type === 'FunctionDeclaration' || d.type === 'ClassDeclaration') && d.id) {
          blank(node.start, d.start);
          exported.set('default', d.id.name);
        } else {
          // `{ default: … }.default` names an anonymous function or class "default", as the export did.
          edits.push({ start: node.start, end: d.start, text: 'const __blockx_default = { default: (' });
          edits.push({ start: d.end, end: node.end, text: ') }.default;' });
          exported.set('default', '__blockx_default');
        }
        break;
      }
      default:
        break;
    }
  }

  let body = applyEdits(source, edits);
  // The source map comment must stay the module's last line.
  let mapComment = '';
  const map = /\n\/\/# sourceMappingURL=[^\n]*\s*$/.exec(body);
  if (map) {
    mapComment = map[0].trim();
    body = body.slice(0, map.index);
  }
  const isAsync = hasTopLevelAwait(program);
  const getters = [...exported].map(([name, expr]) => `get ${JSON.stringify(name)}() { return ${expr}; }`);
  let result = `{ ${getters.join(', ')} }`;
  if (stars.length) result = stars.reduce((o, ns) => `__blockx_star(${o}, ${ns})`, result);
  const code = [
    `export ${isAsync ? 'async ' : ''}function ${INSTANTIATE_EXPORT}() {${body}`,
    `;return ${result};`,
    '}',
    ...imports,
    ...(stars.length ? [STAR_HELPER] : []),
    mapComment,
  ].join('\n');
  return { ok: true, code, async: isAsync };
}

/** Adds the names of an `export * from` namespace the module does not export itself (live, like ESM). */
const STAR_HELPER = `function __blockx_star(o, ns) {
  for (const k of Object.keys(ns)) {
    if (k !== 'default' && !Object.hasOwn(o, k)) Object.defineProperty(o, k, { get: () => ns[k], enumerable: true });
  }
  return o;
}`;

function applyEdits(source: string, edits: Edit[]): string {
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += source.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + source.slice(at);
}

function exportName(n: Node): string {
  const v = n as Node & { name?: string; value?: unknown };
  return v.type === 'Identifier' ? v.name! : String(v.value);
}

function declaredNames(d: Node): string[] {
  const v = d as Node & { id?: Node | null; declarations?: { id: Pattern }[] };
  if (v.declarations) return v.declarations.flatMap((x) => patternNames(x.id));
  return v.id ? [exportName(v.id)] : [];
}

function patternNames(p: Pattern | null): string[] {
  if (p === null) return [];
  switch (p.type) {
    case 'Identifier':
      return [p.name];
    case 'ObjectPattern':
      return p.properties.flatMap((q) => patternNames(q.type === 'RestElement' ? q.argument : q.value));
    case 'ArrayPattern':
      return p.elements.flatMap((q) => patternNames(q));
    case 'RestElement':
      return patternNames(p.argument);
    case 'AssignmentPattern':
      return patternNames(p.left);
    case 'MemberExpression':
      return [];
    default: {
      const _exhaustive: never = p;
      throw new Error(`unknown pattern ${JSON.stringify(_exhaustive)}`);
    }
  }
}

const FUNCTION_NODES = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** Whether the module awaits at its top level (outside every function). */
function hasTopLevelAwait(program: Program): boolean {
  const stack: unknown[] = [...program.body];
  while (stack.length) {
    const n = stack.pop();
    if (n === null || typeof n !== 'object') continue;
    if (Array.isArray(n)) {
      stack.push(...(n as unknown[]));
      continue;
    }
    const node = n as Node & { await?: boolean };
    if (FUNCTION_NODES.has(node.type)) continue;
    if (node.type === 'AwaitExpression' || (node.type === 'ForOfStatement' && node.await)) return true;
    if (node.type === 'MethodDefinition' || node.type === 'Property') {
      // a method's body is a function; its computed key is not
      const m = node as Node & { computed: boolean; key: Node; value: Node };
      if (m.computed) stack.push(m.key);
      if (m.value.type !== 'FunctionExpression') stack.push(m.value);
      continue;
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'loc' && typeof v === 'object') stack.push(v);
  }
  return false;
}
