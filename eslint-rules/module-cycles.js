import fs from 'node:fs';
import path from 'node:path';

/**
 * No circle between modules, type-only imports included (import-x/no-cycle leaves type-only imports
 * out, and a circle of types is still two modules that cannot be understood apart). The graph has
 * an arrow from module A to module B when a file of src/modules/A imports '../B/...'; it is read
 * once per run from the files on disk.
 */
const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]\.\.\/([^./'"][^/'"]*)\//g;

function moduleGraph(modulesDir) {
  const graph = new Map();
  for (const mod of fs.readdirSync(modulesDir, { withFileTypes: true })) {
    if (!mod.isDirectory()) continue;
    const edges = new Set();
    const walk = (dir) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts')) for (const m of fs.readFileSync(p, 'utf8').matchAll(IMPORT)) if (m[1] !== mod.name) edges.add(m[1]);
      }
    };
    walk(path.join(modulesDir, mod.name));
    graph.set(mod.name, edges);
  }
  return graph;
}

/** A path of modules from `from` to `to`, or null. */
function route(graph, from, to) {
  const seen = new Set([from]);
  const queue = [[from]];
  while (queue.length) {
    const trail = queue.shift();
    for (const next of graph.get(trail.at(-1)) ?? []) {
      if (next === to) return [...trail, next];
      if (!seen.has(next)) {
        seen.add(next);
        queue.push([...trail, next]);
      }
    }
  }
  return null;
}

const graphs = new Map();

export default {
  meta: { type: 'problem', messages: { cycle: 'Module circle: {{circle}}. Move the shared part down a module, or pass it in.' }, schema: [] },
  create(context) {
    const file = context.filename;
    const m = /^(.*[\\/]src[\\/]modules)[\\/]([^\\/]+)[\\/]/.exec(file);
    if (!m) return {};
    const [, modulesDir, self] = m;
    const check = (node) => {
      const source = node.source?.value;
      const target = typeof source === 'string' ? /^\.\.\/([^./][^/]*)\//.exec(source)?.[1] : undefined;
      if (!target || target === self) return;
      if (!graphs.has(modulesDir)) graphs.set(modulesDir, moduleGraph(modulesDir));
      const back = route(graphs.get(modulesDir), target, self);
      if (back) context.report({ node, messageId: 'cycle', data: { circle: [self, ...back].join(' -> ') } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};
