// Module hooks that serve an epoch snapshot's module text for `file:///…/<fn>.ts?blockx-epoch=<id>`.
//
// Each execution thread registers them once (module.register; on Node 20 every thread that registers
// gets its own hooks chain) and posts `{url, code}` on the hooks port right before `import(url)`. The
// port message and the import request travel on different channels, so `load` waits for the text to
// arrive. Other URLs pass through untouched (to tsx, when registered, for TypeScript helpers).
//
// The hooks are a self-contained JS string, registered as a `data:` URL: the hooks thread needs no
// TypeScript loader, whether the executor runs from src/ under tsx or from dist/.

export const EPOCH_LOADER_HOOKS_SOURCE = `
const PARAM = 'blockx-epoch=';
const sources = new Map();
const waiters = new Map();
export async function initialize({ port }) {
  port.on('message', (m) => {
    sources.set(m.url, m.code);
    const w = waiters.get(m.url);
    if (w) { waiters.delete(m.url); for (const f of w) f(); }
  });
  port.unref();
}
export async function resolve(specifier, context, next) {
  if (specifier.startsWith('file:') && specifier.includes(PARAM)) {
    return { url: specifier, format: 'module', shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.includes(PARAM)) return next(url, context);
  if (!sources.has(url)) {
    await new Promise((resolve, reject) => {
      const list = waiters.get(url) ?? [];
      const timer = setTimeout(() => reject(new Error('blockx: no snapshot text arrived for ' + url)), 30000);
      list.push(() => { clearTimeout(timer); resolve(); });
      waiters.set(url, list);
    });
  }
  const source = sources.get(url);
  sources.delete(url);
  return { format: 'module', source, shortCircuit: true };
}
`;

export const EPOCH_LOADER_HOOKS_URL = `data:text/javascript,${encodeURIComponent(EPOCH_LOADER_HOOKS_SOURCE)}`;
