/**
 * CustomResourceDefinitions for a server started as a library, as envtest's CRD options install
 * them: objects, YAML files, or directories of YAML files (every `CustomResourceDefinition`
 * document in them), created (or updated when present) and waited for until each one is
 * Established and its resources are served.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import type { ApiObject, CoreApi, RequestContext, ResourceCatalog } from '../core';
import { StatusError } from '../status';
import type { Naming } from '../naming';

/** A definition as an object, or a path to a YAML file or a directory of them. */
export type CrdSource = ApiObject | string;

const ADMIN: RequestContext = { user: { username: 'system:admin', groups: ['system:masters'] }, userAgent: 'keelson-library' };

/** How long `installCRDs` waits for every definition to be served. */
const ESTABLISH_TIMEOUT_MS = 30_000;

async function filesUnder(at: string): Promise<string[]> {
  const info = await stat(at);
  if (!info.isDirectory()) return [at];
  const names = (await readdir(at)).sort();
  const out: string[] = [];
  for (const name of names) {
    const full = path.join(at, name);
    if ((await stat(full)).isDirectory()) continue;
    if (/\.(ya?ml|json)$/i.test(name)) out.push(full);
  }
  return out;
}

/** Every CustomResourceDefinition the sources hold. */
export async function readCrds(sources: readonly CrdSource[]): Promise<ApiObject[]> {
  const out: ApiObject[] = [];
  for (const source of sources) {
    if (typeof source !== 'string') {
      out.push(source);
      continue;
    }
    for (const file of await filesUnder(source)) {
      for (const doc of YAML.parseAllDocuments(await readFile(file, 'utf8'))) {
        if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        const value = doc.toJS() as ApiObject | null;
        if (value && typeof value === 'object' && value.kind === 'CustomResourceDefinition') out.push(value);
      }
    }
  }
  return out;
}

/** Create (or update) the definitions, then wait until each is Established and served. */
export async function installCrds(core: CoreApi, catalog: ResourceCatalog, naming: Naming, sources: readonly CrdSource[]): Promise<ApiObject[]> {
  const crds = await readCrds(sources);
  const target = { group: naming.groups.apiextensions, version: 'v1', resource: 'customresourcedefinitions' };
  const installed: ApiObject[] = [];
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    try {
      installed.push((await core.create(target, crd, {}, ADMIN)).object);
    } catch (err) {
      if (!StatusError.is(err, 'AlreadyExists')) throw err;
      const current = await core.get({ ...target, name }, {}, ADMIN);
      const next = { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion } };
      installed.push((await core.update({ ...target, name }, next, {}, ADMIN)).object);
    }
  }
  await servedAll(catalog, installed);
  return installed;
}

interface CrdView {
  spec?: { group?: string; names?: { plural?: string }; versions?: { name: string; served?: boolean }[] };
}

/** Resolves once every definition's served versions are in the catalog. */
function servedAll(catalog: ResourceCatalog, crds: readonly ApiObject[]): Promise<void> {
  const wanted = crds.flatMap((c) => {
    const spec = (c as CrdView).spec;
    return (spec?.versions ?? []).filter((v) => v.served).map((v) => ({ group: spec?.group, version: v.name, resource: spec?.names?.plural }));
  });
  const done = () => wanted.every((w) => catalog.resources.some((d) => d.group === w.group && d.version === w.version && d.resource === w.resource));
  if (done()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      const missing = wanted.filter((w) => !catalog.resources.some((d) => d.group === w.group && d.version === w.version && d.resource === w.resource));
      reject(
        new Error(
          `custom resources not served after ${ESTABLISH_TIMEOUT_MS / 1000}s: ${missing.map((m) => `${m.resource}.${m.group}/${m.version}`).join(', ')}`,
        ),
      );
    }, ESTABLISH_TIMEOUT_MS);
    const stop = catalog.subscribe(() => {
      if (!done()) return;
      clearTimeout(timer);
      stop();
      resolve();
    });
  });
}
