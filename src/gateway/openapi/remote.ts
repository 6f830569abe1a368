/**
 * Extension servers' OpenAPI in this server's documents (the aggregation layer,
 * docs/AGGREGATION.md): their v2 paths and definitions merged into `/openapi/v2` as
 * kube-openapi's MergeSpecsIgnorePathConflictRenamingDefinitionsAndParameters merges them (a
 * path already served is left out; a definition of a name already taken is dropped when it is
 * the same, renamed `<name>_v2`, `<name>_v3`, … when it differs, and the references to it
 * follow), and their v3 group-version documents listed in `/openapi/v3` and served as they came.
 */
import { isDeepStrictEqual } from 'node:util';
import type { JsonSchema } from './schemas';

/** One extension server's v2 document, already cut to its APIService's group version. */
export interface RemoteV2Spec {
  paths: Record<string, JsonSchema>;
  definitions: Record<string, JsonSchema>;
}

/** What the aggregator knows of the extension servers' OpenAPI. */
export interface RemoteOpenApi {
  /** Grows when any of the rest changes. */
  generation(): number;
  /** Each remote APIService's v2 part, in the aggregator's order (group priority, then version priority). */
  v2(): readonly RemoteV2Spec[];
  /** The v3 documents by index path (`apis/<group>/<version>`). */
  v3(): ReadonlyMap<string, Buffer>;
}

const REF_PREFIX = '#/definitions/';

/** Every definition name `value` references (`$ref: "#/definitions/<name>"`). */
function collectReferences(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectReferences(v, into);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string' && v.startsWith(REF_PREFIX)) into.add(v.slice(REF_PREFIX.length));
    else collectReferences(v, into);
  }
}

/** `value` with its references renamed per `renames` (a copy where anything changed). */
function renameReferences(value: unknown, renames: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renameReferences(v, renames));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const renamed = key === '$ref' && typeof v === 'string' && v.startsWith(REF_PREFIX) ? renames.get(v.slice(REF_PREFIX.length)) : undefined;
    out[key] = renamed ? `${REF_PREFIX}${renamed}` : renameReferences(v, renames);
  }
  return out;
}

/** The definitions `roots` reach, transitively, among `definitions`. */
export function reachableDefinitions(roots: unknown, definitions: Readonly<Record<string, JsonSchema>>): Set<string> {
  const seen = new Set<string>();
  const pending = new Set<string>();
  collectReferences(roots, pending);
  while (pending.size) {
    const [name] = pending;
    pending.delete(name!);
    if (seen.has(name!) || !(name! in definitions)) continue;
    seen.add(name!);
    collectReferences(definitions[name!], pending);
  }
  return seen;
}

/**
 * An extension server's v2 document cut to the paths under `/apis/<group>/<version>/` and the
 * definitions they reach (kube-openapi's FilterSpecByPathsWithoutSideEffects, as the aggregator
 * applies it to each APIService's document).
 */
export function filterV2ByGroupVersion(
  doc: { paths?: Record<string, JsonSchema>; definitions?: Record<string, JsonSchema> },
  group: string,
  version: string,
): RemoteV2Spec {
  const prefix = `/apis/${group}/${version}/`;
  const paths = Object.fromEntries(Object.entries(doc.paths ?? {}).filter(([path]) => path.startsWith(prefix)));
  const all = doc.definitions ?? {};
  const definitions: Record<string, JsonSchema> = {};
  for (const name of reachableDefinitions(paths, all)) definitions[name] = all[name]!;
  return { paths, definitions };
}

/**
 * The remote parts to add to a document that already has `paths` and `definitions`: paths it
 * has are left out; each remote part's definitions deduplicated against everything before it,
 * or renamed.
 */
export function mergeRemoteV2(
  local: { paths: ReadonlySet<string>; definition(name: string): JsonSchema | undefined },
  remote: readonly RemoteV2Spec[],
): RemoteV2Spec {
  const out: RemoteV2Spec = { paths: {}, definitions: {} };
  const taken = (name: string) => local.definition(name) ?? out.definitions[name];
  for (const part of remote) {
    const paths = Object.fromEntries(Object.entries(part.paths).filter(([path]) => !local.paths.has(path) && !(path in out.paths)));
    const used = reachableDefinitions(paths, part.definitions);
    const renames = new Map<string, string>();
    for (const name of used) {
      const had = taken(name);
      if (had === undefined || isDeepStrictEqual(had, part.definitions[name])) continue;
      let n = 2;
      while (taken(`${name}_v${n}`) !== undefined || used.has(`${name}_v${n}`)) n++;
      renames.set(name, `${name}_v${n}`);
    }
    for (const name of used) {
      const target = renames.get(name) ?? name;
      if (!renames.has(name) && taken(name) !== undefined) continue;
      out.definitions[target] = renames.size ? (renameReferences(part.definitions[name], renames) as JsonSchema) : part.definitions[name]!;
    }
    for (const [path, item] of Object.entries(paths)) out.paths[path] = renames.size ? (renameReferences(item, renames) as JsonSchema) : item;
  }
  return out;
}
