/**
 * The layers of `src/` point one way (docs/ARCHITECTURE.md, "Layers"): a module may import its
 * own layer and the layers below it, never one above or beside it. A new top-level folder must
 * be placed in the table before it can be imported at all. The layers above the core reach it
 * through its front door only, and inside the core its folders and top-level files import each
 * other without cycles.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Rank of each top-level folder of `src/`; lower layers never import higher or equal-ranked ones. */
export const LAYERS: Record<string, number> = {
  naming: 0,
  clock: 0,
  util: 0,
  metrics: 0,
  status: 0,
  features: 0,
  schema: 1,
  // Generated message codecs (proto/): they import nothing of ours; the store's etcd client and the gRPC door use them.
  gen: 1,
  codecs: 2,
  store: 3,
  core: 4,
  authn: 5,
  // Authorization reuses authentication's webhook client, CEL compiler and user names.
  authz: 6,
  // API Priority and Fairness: the dispatcher both doors admit requests through (it reads the core's objects and metrics).
  flowcontrol: 6,
  gateway: 7,
  grpc: 7,
  controllers: 8,
  server: 9,
  library: 10,
};

const SRC = path.join(__dirname, '..', '..', 'src');

interface Violation {
  from: string;
  to: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}

/** Relative module specifiers of a TypeScript source (static imports, re-exports, dynamic imports, requires). */
export function relativeImports(source: string): string[] {
  const specs: string[] = [];
  for (const m of source.matchAll(/(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"](\.{1,2}\/[^'"]*)['"]/g)) specs.push(m[1]!);
  return specs;
}

function layerOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0]!;
}

/** Every import in `files` (paths under `src/`) that points against the layer order. */
export function layerViolations(files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const from = layerOf(file);
    for (const spec of relativeImports(source)) {
      const to = layerOf(path.resolve(path.dirname(file), spec));
      if (to === from) continue;
      const a = LAYERS[from];
      const b = LAYERS[to];
      if (a === undefined || b === undefined || b >= a) out.push({ from: path.relative(SRC, file), to: spec });
    }
  }
  return out;
}

const CORE = path.join(SRC, 'core');

/**
 * The modules of `src/core` (paths inside it) that the layers above may import: its front door
 * (docs/ARCHITECTURE.md, "Layers"). Everything else in the core is its own.
 */
export const CORE_ENTRIES: readonly string[] = ['index.ts'];

/** The module a specifier resolved to `target` names, as a path inside `src/core`: a file, or a folder's index. */
function coreModule(target: string, files: ReadonlyMap<string, string>): string {
  const rel = path.relative(CORE, target).split(path.sep).join('/');
  if (rel.endsWith('.ts')) return rel;
  if (files.has(`${target}.ts`)) return `${rel}.ts`;
  return rel === '' ? 'index.ts' : `${rel}/index.ts`;
}

/** Every import from outside `src/core` into it that names a module other than its entries. */
export function coreEntryBypasses(files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, source] of files) {
    if (!path.relative(CORE, file).startsWith('..')) continue;
    for (const spec of relativeImports(source)) {
      const target = path.resolve(path.dirname(file), spec);
      if (path.relative(CORE, target).startsWith('..')) continue;
      if (!CORE_ENTRIES.includes(coreModule(target, files))) out.push({ from: path.relative(SRC, file), to: spec });
    }
  }
  return out;
}

/**
 * What each unit of `src/core` imports of the others. A unit is a folder (`registry`) or a file
 * at the core's top (`informer.ts`); `core.ts` and `index.ts`, which wire the folders and open
 * the door, are units like the rest.
 */
export function coreImports(files: ReadonlyMap<string, string>): Map<string, Set<string>> {
  const unit = (target: string): string | undefined => {
    const rel = path.relative(CORE, target);
    if (rel === '' || rel.startsWith('..')) return undefined;
    const parts = rel.split(path.sep);
    if (parts.length > 1) return parts[0]!;
    // `../apply` names a folder (its index), `../api` a file at core's top.
    return rel.endsWith('.ts') ? rel : files.has(`${target}.ts`) ? `${rel}.ts` : rel;
  };
  const edges = new Map<string, Set<string>>();
  for (const [file, source] of files) {
    const from = unit(file);
    if (!from) continue;
    for (const spec of relativeImports(source)) {
      const to = unit(path.resolve(path.dirname(file), spec));
      if (to && to !== from) (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
    }
  }
  return edges;
}

/** A cycle among the folders and top-level files of `src/core`, or undefined. */
export function coreCycle(files: ReadonlyMap<string, string>): string[] | undefined {
  const edges = coreImports(files);
  // Depth-first search for a back edge.
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, 'done');
    return undefined;
  };
  for (const node of edges.keys()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

/**
 * Imports between the store's backends (`src/store/<backend>/`): each imports the interface at the
 * store's top (types.ts, keys.ts) and never another backend, and of the top only `index.ts` (the
 * map that chooses a backend) imports a backend.
 */
export function backendCrossings(files: ReadonlyMap<string, string>): Violation[] {
  const STORE = path.join(SRC, 'store');
  /** The backend folder a path lies in; '' at the store's top; undefined outside the store. */
  const backendOf = (file: string): string | undefined => {
    const rel = path.relative(STORE, file);
    if (rel.startsWith('..')) return undefined;
    const parts = rel.split(path.sep);
    return parts.length > 1 ? parts[0]! : '';
  };
  const out: Violation[] = [];
  for (const [file, source] of files) {
    const from = backendOf(file);
    if (from === undefined || (from === '' && path.basename(file) === 'index.ts')) continue;
    for (const spec of relativeImports(source)) {
      const to = backendOf(path.resolve(path.dirname(file), spec));
      if (to !== undefined && to !== '' && to !== from) out.push({ from: path.relative(SRC, file), to: spec });
    }
  }
  return out;
}

describe('layers of src/', () => {
  const files = new Map(sourceFiles(SRC).map((f) => [f, fs.readFileSync(f, 'utf8')] as const));

  it('every top-level folder has a layer', () => {
    const folders = fs
      .readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.filter((f) => LAYERS[f] === undefined)).toEqual([]);
  });

  it('no module imports a layer above or beside its own', () => {
    expect(layerViolations(files)).toEqual([]);
  });

  it('the layers above src/core import it through its front door only', () => {
    expect(coreEntryBypasses(files)).toEqual([]);
  });

  it('the folders and top-level files of src/core import each other without cycles', () => {
    expect(coreCycle(files)).toBeUndefined();
  });

  it("docs/ARCHITECTURE.md's graph of src/core is the code's", () => {
    const doc = fs.readFileSync(path.join(SRC, '..', 'docs', 'ARCHITECTURE.md'), 'utf8');
    const block = /Inside `src\/core`[\s\S]*?```\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const documented: Record<string, string[]> = {};
    for (const m of block.matchAll(/([a-z][a-z.-]*) ─▶ ([a-z][a-z.-]*(?:, [a-z][a-z.-]*)*)/g)) documented[m[1]!] = m[2]!.split(', ').sort();
    // The shared types (api.ts, which every unit imports), the wiring (core.ts) and the door (index.ts) stand apart.
    const code = Object.fromEntries(
      [...coreImports(files)]
        .filter(([from]) => from !== 'core.ts' && from !== 'index.ts')
        .map(([from, to]) => [from, [...to].filter((t) => t !== 'api.ts').sort()] as const)
        .filter(([, to]) => to.length > 0),
    );
    expect(documented).toEqual(code);
  });

  it('finds a cycle among core folders', () => {
    const probe = new Map([
      [path.join(SRC, 'core', 'registry', 'a.ts'), "import { b } from '../patch/b';"],
      [path.join(SRC, 'core', 'patch', 'b.ts'), "import type { c } from '../apply';"],
      [path.join(SRC, 'core', 'apply', 'index.ts'), "import { a } from '../registry/a';"],
    ]);
    expect(coreCycle(probe)).toEqual(['registry', 'patch', 'apply', 'registry']);
  });

  it('finds a cycle through a file at the top of src/core', () => {
    const probe = new Map([
      [path.join(SRC, 'core', 'admission', 'sources.ts'), "import { Informer } from '../informer';"],
      [path.join(SRC, 'core', 'informer.ts'), "import { storeNotAnswering } from './registry/storage-errors';\nimport type { CoreApi } from './api';"],
      [path.join(SRC, 'core', 'registry', 'storage-errors.ts'), "import type { AdmissionPlugin } from '../admission';"],
      [path.join(SRC, 'core', 'api.ts'), ''],
    ]);
    expect(coreCycle(probe)).toEqual(['admission', 'informer.ts', 'registry', 'admission']);
  });

  it('finds an import into src/core that does not name its front door', () => {
    const probe = new Map([
      [
        path.join(SRC, 'gateway', 'probe.ts'),
        "import type { CoreApi } from '../core';\nimport { buildTable } from '../core/table';\nconst m = require('../core/index');",
      ],
      [path.join(SRC, 'controllers', 'probe.ts'), "import { followResource } from '../core/informer';\nexport { x } from '../codecs';"],
      [path.join(SRC, 'core', 'index.ts'), "export * from './api';"],
      [path.join(SRC, 'core', 'informer.ts'), "import type { CoreApi } from './api';"],
      [path.join(SRC, 'core', 'registry', 'probe.ts'), "import { storeNotAnswering } from '../api';"],
    ]);
    expect(coreEntryBypasses(probe)).toEqual([
      { from: path.join('gateway', 'probe.ts'), to: '../core/table' },
      { from: path.join('controllers', 'probe.ts'), to: '../core/informer' },
    ]);
  });

  it('finds an import against the direction', () => {
    const probe = new Map([
      [path.join(SRC, 'codecs', 'probe.ts'), "import { x } from '../gateway/codecs/codec';\nimport type { y } from '../schema';"],
      [path.join(SRC, 'gateway', 'probe.ts'), "export * from '../grpc';\nconst m = import('../core/api');"],
      [path.join(SRC, 'store', 'probe.ts'), "import { z } from '../nowhere/z';"],
    ]);
    expect(layerViolations(probe)).toEqual([
      { from: path.join('codecs', 'probe.ts'), to: '../gateway/codecs/codec' },
      { from: path.join('gateway', 'probe.ts'), to: '../grpc' },
      { from: path.join('store', 'probe.ts'), to: '../nowhere/z' },
    ]);
  });

  it("the store's backends import the interface, never each other", () => {
    expect(backendCrossings(files)).toEqual([]);
  });

  it('finds an import from one store backend into another', () => {
    const probe = new Map([
      [path.join(SRC, 'store', 'etcd', 'probe.ts'), "import { a } from '../embedded/log';\nimport type { Store } from '../types';"],
      [path.join(SRC, 'store', 'keys.ts'), "import { b } from './etcd/client';"],
      [path.join(SRC, 'store', 'index.ts'), "import { c } from './embedded';\nconst m = import('./etcd');"],
      [path.join(SRC, 'store', 'embedded', 'store.ts'), "import { d } from './log';\nimport { e } from '../keys';"],
    ]);
    expect(backendCrossings(probe)).toEqual([
      { from: path.join('store', 'etcd', 'probe.ts'), to: '../embedded/log' },
      { from: path.join('store', 'keys.ts'), to: './etcd/client' },
    ]);
  });
});
