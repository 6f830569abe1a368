/**
 * The backing store's public surface: the interface, its error type, and `createStore`. Each
 * backend has its folder below (`etcd/`, `embedded/`), which imports the interface (types.ts,
 * keys.ts) and never the other backend.
 *
 * Backends are chosen from one explicit map; importing this module starts nothing and opens
 * nothing.
 */
import { createEmbeddedStore } from './embedded';
import type { EtcdTlsOptions } from './etcd';
import type { Store, StoreKind } from './types';

export * from './types';
export type { EtcdTlsOptions } from './etcd';

export type StoreOptions =
  | { kind: 'etcd'; endpoints: string[]; prefix?: string; tls?: EtcdTlsOptions }
  | { kind: 'embedded'; dataDir: string }
  /** The embedded store with its database in memory: nothing on disk, gone when closed. */
  | { kind: 'embedded'; inMemory: true };

type OptionsOf<K extends StoreKind> = Extract<StoreOptions, { kind: K }>;

const backends: { readonly [K in StoreKind]: (options: OptionsOf<K>) => Store } = {
  // Loaded when first chosen: a server on the embedded store never needs the etcd client
  // (its HTTP/2 client and the generated etcd codecs; docs/BENCHMARKS.md, idle RSS).
  etcd: (options) => etcdBackend().createEtcdStore({ endpoints: options.endpoints, prefix: options.prefix, tls: options.tls }),
  embedded: (options) => createEmbeddedStore('inMemory' in options ? {} : { dataDir: options.dataDir }),
};

function etcdBackend(): typeof import('./etcd') {
  return require('./etcd') as typeof import('./etcd');
}

/** Opens the backend named by `options.kind`. The embedded store opens its file synchronously. */
export function createStore(options: StoreOptions): Store {
  const open = backends[options.kind] as (options: StoreOptions) => Store;
  return open(options);
}
