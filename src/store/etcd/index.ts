/**
 * The etcd backend: the Store interface over an etcd cluster (store.ts), through the store's own
 * gRPC client over HTTP/2 (client.ts, h2-connection.ts, hpack.ts) and hand-written Txn codec
 * (txn-codec.ts). `../index.ts` loads this folder only when the etcd backend is chosen.
 */
export { COMPACT_REV_KEY, createEtcdStore, type EtcdStoreOptions, type EtcdTlsOptions } from './store';
