/**
 * `jose`, loaded the first time a token is checked or something is signed. It is an ES module
 * graph that takes ~30 ms of an empty server's start to load (docs/BENCHMARKS.md, "What the
 * mechanisms save"), and a server whose clients all present certificates never needs it.
 */
import type * as Jose from 'jose';

/** The library, loaded once for the process (a module, not a server's state). */
let loaded: typeof Jose | undefined;

export function jose(): typeof Jose {
  // A require on first use rather than an import: imports load at start.
  loaded ??= require('jose') as typeof Jose;
  return loaded;
}
