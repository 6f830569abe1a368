/**
 * The backing store's public surface: the interface, its error type, and `createStore`.
 *
 * Backends are chosen from one explicit map; importing this module starts nothing and opens
 * nothing.
 */
import { createEmbeddedStore } from './embedded-store';
import { type EtcdTlsOptions, createEtcdStore } from './etcd-store';
import type { Store, StoreKind } from './types';

export * from './types';
export type { EtcdTlsOptions } from './etcd-store';

export type StoreOptions =
  | { kind: 'etcd'; endpoints: string[]; prefix?: string; tls?: EtcdTlsOptions }
  | { kind: 'embedded'; dataDir: string }
  /** The embedded store with its database in memory: nothing on disk, gone when closed. */
  | { kind: 'embedded'; inMemory: true };

type OptionsOf<K extends StoreKind> = Extract<StoreOptions, { kind: K }>;

const backends: { readonly [K in StoreKind]: (options: OptionsOf<K>) => Store } = {
  etcd: (options) => createEtcdStore({ endpoints: options.endpoints, prefix: options.prefix, tls: options.tls }),
  embedded: (options) => createEmbeddedStore('inMemory' in options ? {} : { dataDir: options.dataDir }),
};

/** Opens the backend named by `options.kind`. The embedded store opens its file synchronously. */
export function createStore(options: StoreOptions): Store {
  const open = backends[options.kind] as (options: StoreOptions) => Store;
  return open(options);
}
