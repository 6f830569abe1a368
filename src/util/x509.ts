/**
 * `@peculiar/x509`, loaded on first use: the library costs ~16 MB of RSS for good, so nothing
 * loads it at start (a require rather than an import: imports load at start).
 */
import type * as X509Library from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

/** The library, loaded once for the process (a module, not a server's state). */
let x509Library: typeof X509Library | undefined;

export function x509(): typeof X509Library {
  if (!x509Library) {
    require('reflect-metadata');
    const lib = require('@peculiar/x509') as typeof X509Library;
    lib.cryptoProvider.set(webcrypto as unknown as Crypto);
    x509Library = lib;
  }
  return x509Library;
}
