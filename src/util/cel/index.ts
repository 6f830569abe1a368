/**
 * `@bufbuild/cel`, loaded on first use. Loading it costs ~15 MB of RSS and part of the start,
 * and a server without CEL validation rules, admission policies, webhook match conditions or
 * structured authentication never needs it (docs/BENCHMARKS.md, idle RSS budget).
 */
import type * as CelLibrary from '@bufbuild/cel';
import type * as CelExtensions from '@bufbuild/cel/ext';
import type * as Libraries from './kubernetes';

export type CelEnv = ReturnType<typeof CelLibrary.celEnv>;

interface Loaded {
  readonly lib: typeof CelLibrary;
}

/** The library, loaded once for the process (a module, not a server's state). */
let loaded: Loaded | undefined;
/** Shared by every server in the process: an environment, one per profile, is not changed once built. */
const environments = new Map<string, CelEnv>();

export function cel(): Loaded {
  // A require on first use rather than an import: imports load at start.
  loaded ??= { lib: require('@bufbuild/cel') as typeof CelLibrary };
  return loaded;
}

/**
 * The environment expressions run in, as upstream's base environment: CEL's standard functions,
 * the strings extension and the Kubernetes libraries (kubernetes.ts), whose Quantity type is
 * named after the profile (`kubernetes.Quantity`). One per profile, built on first use.
 */
/** What of a naming profile the environment needs (util does not import the naming module). */
export interface CelProfile {
  readonly word: string;
}

export function celEnvironment(naming: CelProfile): CelEnv {
  let env = environments.get(naming.word);
  if (!env) {
    const { lib } = cel();
    const { strings } = require('@bufbuild/cel/ext') as typeof CelExtensions;
    const { kubernetesLibraries } = require('./kubernetes') as typeof Libraries;
    const libraries = kubernetesLibraries(lib, naming.word);
    env = lib.celEnv({ funcs: [...strings, ...libraries.funcs], registry: libraries.registry, re2: libraries.re2 });
    environments.set(naming.word, env);
  }
  return env;
}

/** Shared by every server in the process: the names are the same for every profile and never change. */
let functionNames: Set<string> | undefined;

/**
 * Whether the environment has a function (or method) called `name`. The names are the same for
 * every profile; the environment built to list them is not used for anything else.
 */
export function celFunctionExists(name: string): boolean {
  if (!functionNames) {
    functionNames = new Set();
    for (const fn of celEnvironment({ word: 'function_names' }).funcs) functionNames.add(fn.name);
  }
  return functionNames.has(name);
}

/** CEL's reserved words: not identifiers (a variable or field named so is escaped, or refused). */
export const CEL_RESERVED_WORDS: ReadonlySet<string> = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);
