// The rows of one section as a tree of objects (groups) and leaves (fields), in row order: what the
// schema, type and docs renderers walk.
import { CONFIG_FIELDS } from './index.js';
import type { ConfigField, ConfigSection } from './field.js';

export interface GroupNode {
  readonly node: 'group';
  /** Dotted path inside the section ('' for the section itself). */
  readonly path: string;
  readonly children: Map<string, FieldNode>;
}
export interface LeafNode {
  readonly node: 'leaf';
  readonly field: ConfigField;
}
export type FieldNode = GroupNode | LeafNode;

export function fieldTree(section: ConfigSection, fields: readonly ConfigField[] = CONFIG_FIELDS): GroupNode {
  const root: GroupNode = { node: 'group', path: '', children: new Map() };
  for (const field of fields.filter((f) => f.section === section)) {
    const segments = field.path.split('.');
    let group = root;
    segments.slice(0, -1).forEach((seg, i) => {
      let next = group.children.get(seg);
      if (next === undefined) {
        next = { node: 'group', path: segments.slice(0, i + 1).join('.'), children: new Map() };
        group.children.set(seg, next);
      }
      if (next.node !== 'group') throw new Error(`config field ${section}:${field.path} nests under a leaf`);
      group = next;
    });
    const key = segments[segments.length - 1] as string;
    if (group.children.has(key)) throw new Error(`config field ${section}:${field.path} is listed twice`);
    group.children.set(key, { node: 'leaf', field });
  }
  return root;
}
