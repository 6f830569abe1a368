/**
 * The backends the store conformance suite runs against, each opened through `createStore`.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createStore, type Store, type StoreKind } from '../../src/store';
import { EmbeddedStore } from '../../src/store/embedded';
import { startEtcd, type EtcdInstance } from '../support/etcd';

export interface BackendUnderTest {
  readonly name: StoreKind;
  /** Opens the store the suite runs against (once per suite). */
  open(): Promise<Store>;
  /**
   * Another client on the same data: for etcd a second connection, as a second API server
   * would have; for embedded the same store, since one process owns the file.
   */
  peer(): Promise<Store>;
  /** A fresh store and a way to cut it off: etcd stops its server, embedded closes the store. */
  breakable(): Promise<{ store: Store; cut(): Promise<void>; cleanup(): Promise<void> }>;
  /** Checks made after each case (the differential oracle's comparisons); throws on a failure. */
  check?(): Promise<void>;
  teardown(): Promise<void>;
}

async function tempDir(): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), 'keelson-store-'));
}

export function etcdBackend(): BackendUnderTest {
  let etcd: EtcdInstance | undefined;
  const stores: Store[] = [];
  const connect = async () => {
    etcd ??= await startEtcd();
    const store = createStore({ kind: 'etcd', endpoints: [etcd.endpoint] });
    stores.push(store);
    return store;
  };
  return {
    name: 'etcd',
    open: connect,
    peer: connect,
    async breakable() {
      const own = await startEtcd();
      const store = createStore({ kind: 'etcd', endpoints: [own.endpoint] });
      return {
        store,
        cut: () => own.stop(),
        cleanup: async () => {
          await store.close();
          await own.stop();
        },
      };
    },
    async teardown() {
      await Promise.all(stores.map((store) => store.close()));
      await etcd?.stop();
    },
  };
}

/** The embedded store, on a file in a temporary directory or (`inMemory`) with its database in memory. */
export function embeddedBackend(inMemory = false): BackendUnderTest {
  let store: Store | undefined;
  const dirs: string[] = [];
  const open = async () => {
    if (!store) {
      const dataDir = inMemory ? undefined : await tempDir();
      if (dataDir) dirs.push(dataDir);
      // A small replay window, so a replaying watch takes many event-loop turns and the
      // racing-writes test really interleaves writes with the replay.
      store = new EmbeddedStore({ ...(dataDir ? { dataDir } : {}), replayWindow: 16 });
    }
    return store;
  };
  return {
    name: 'embedded',
    open,
    peer: open,
    async breakable() {
      const dataDir = await tempDir();
      dirs.push(dataDir);
      const own = inMemory ? createStore({ kind: 'embedded', inMemory: true }) : createStore({ kind: 'embedded', dataDir });
      return { store: own, cut: () => own.close(), cleanup: () => own.close() };
    },
    async teardown() {
      await store?.close();
      await Promise.all(dirs.map((dir) => fs.rm(dir, { recursive: true, force: true })));
    },
  };
}
