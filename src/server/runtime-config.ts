/**
 * `--runtime-config`, as kube-apiserver reads it: comma-separated `<key>[=<value>]` pairs (an
 * omitted value means true) that switch whole group versions (`apps/v1=false`, `v1` or
 * `api/v1` or `api/legacy` for the core group), every version of a stability (`api/all`,
 * `api/ga`, `api/beta`, `api/alpha`) or single resources (`apps/v1/replicasets=false`). The
 * wildcards apply first, then group versions, then resources, whatever their order on the
 * command line. A type switched off is not served at all: not by the core, so neither door
 * reaches it, nor in discovery or OpenAPI, and its paths answer 404.
 */
import type { ResourceDefinition } from '../core';

export type RuntimeConfig = ReadonlyArray<readonly [key: string, enabled: boolean]>;

const STABILITY_KEYS = new Set(['api/all', 'api/ga', 'api/beta', 'api/alpha']);

/** Go's strconv.ParseBool. */
function parseBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/** The flag's pairs, in order; throws on a malformed one. */
export function parseRuntimeConfig(text: string): RuntimeConfig {
  const pairs: Array<readonly [string, boolean]> = [];
  for (const item of text.split(',')) {
    const entry = item.trim();
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const key = (eq < 0 ? entry : entry.slice(0, eq)).trim();
    const raw = eq < 0 ? 'true' : entry.slice(eq + 1).trim();
    const value = parseBool(raw);
    if (!key) throw new Error(`invalid runtime-config entry ${JSON.stringify(entry)}: empty key`);
    if (value === undefined) throw new Error(`invalid value ${raw} for key ${key}`);
    pairs.push([key, value]);
  }
  return pairs;
}

/** The release this server is (its version's minor). */
const SERVER_MINOR = 32;

/** Whether a `major.minor` removal release has arrived for this server. */
function isRemoved(release: string | undefined): boolean {
  const m = release ? /^1\.(\d+)$/.exec(release) : null;
  return m !== null && Number(m[1]) <= SERVER_MINOR;
}

function stabilityOf(version: string): 'ga' | 'beta' | 'alpha' {
  return /alpha\d*$/.test(version) ? 'alpha' : /beta\d*$/.test(version) ? 'beta' : 'ga';
}

/** The group version a key names: `v1`, `api/v1` and `api/legacy` are the core group's. */
function groupVersionOf(key: string): { group: string; version: string; resource?: string } | undefined {
  if (key === 'v1' || key === 'api/v1' || key === 'api/legacy') return { group: '', version: 'v1' };
  const parts = key.split('/');
  if (parts[0] === 'api' && parts.length === 3) return { group: '', version: parts[1]!, resource: parts[2]! };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  if (parts.length === 3) return { group: parts[0]!, version: parts[1]!, resource: parts[2]! };
  return undefined;
}

/**
 * The definitions `config` leaves on. Throws, as upstream refuses to start, on a key naming a
 * group version or resource the server does not have, and when the core group's namespaces
 * would be switched off (the server cannot run without them).
 */
export function applyRuntimeConfig(definitions: readonly ResourceDefinition[], config: RuntimeConfig): ResourceDefinition[] {
  const gvKey = (group: string, version: string) => `${group}/${version}`;
  const served = new Set(definitions.map((d) => gvKey(d.group, d.version)));
  // A version whose removal release has come (flowcontrol v1beta3 in 1.32) starts off, as
  // upstream's default resource config leaves it; `--runtime-config` can still switch it on.
  const removed = new Set(definitions.filter((d) => isRemoved(d.deprecation?.removedIn)).map((d) => gvKey(d.group, d.version)));
  const enabled = new Map<string, boolean>([...served].map((gv) => [gv, !removed.has(gv)]));
  const resourceSwitch = new Map<string, boolean>();
  // Wildcards first, in command-line order.
  for (const [key, value] of config) {
    if (!STABILITY_KEYS.has(key)) continue;
    for (const gv of served) {
      const version = gv.slice(gv.indexOf('/') + 1);
      if (key === 'api/all' || key === `api/${stabilityOf(version)}`) enabled.set(gv, value);
    }
  }
  for (const [key, value] of config) {
    if (STABILITY_KEYS.has(key)) continue;
    const named = groupVersionOf(key);
    if (!named) throw new Error(`invalid key ${key}`);
    const gv = gvKey(named.group, named.version);
    if (!served.has(gv)) throw new Error(`unknown api groups ${named.group ? `${named.group}/${named.version}` : named.version}`);
    if (named.resource === undefined) {
      enabled.set(gv, value);
      continue;
    }
    if (!definitions.some((d) => gvKey(d.group, d.version) === gv && d.resource === named.resource))
      throw new Error(`unknown resource ${named.resource} in ${key}`);
    resourceSwitch.set(`${gv}/${named.resource}`, value);
  }
  const kept = definitions.filter((d) => resourceSwitch.get(`${gvKey(d.group, d.version)}/${d.resource}`) ?? enabled.get(gvKey(d.group, d.version)) ?? true);
  if (!kept.some((d) => d.group === '' && d.resource === 'namespaces')) {
    throw new Error('the core group version v1 (namespaces) cannot be disabled: the server needs it to run');
  }
  return kept;
}
