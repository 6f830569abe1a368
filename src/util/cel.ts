/**
 * `@bufbuild/cel`, loaded on first use. Loading it costs ~15 MB of RSS and part of the start,
 * and a server without CEL validation rules, admission policies, webhook match conditions or
 * structured authentication never needs it (docs/BENCHMARKS.md, idle RSS budget).
 */
import type * as CelLibrary from '@bufbuild/cel';
import type * as CelExtensions from '@bufbuild/cel/ext';

export type CelEnv = ReturnType<typeof CelLibrary.celEnv>;

interface Loaded {
  readonly lib: typeof CelLibrary;
  /** The environment with the strings extension, as upstream's base environment has it. */
  readonly env: CelEnv;
}

let loaded: Loaded | undefined;

export function cel(): Loaded {
  if (!loaded) {
    // A require on first use rather than an import: imports load at start.
    const lib = require('@bufbuild/cel') as typeof CelLibrary;
    const { strings } = require('@bufbuild/cel/ext') as typeof CelExtensions;
    loaded = { lib, env: lib.celEnv({ funcs: strings }) };
  }
  return loaded;
}
