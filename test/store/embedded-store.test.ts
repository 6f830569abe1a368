/**
 * Embedded-only behaviour beyond the conformance suite: one process owns the file, and a
 * reopened store resumes its revision and compaction state exactly.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createStore } from '../../src/store';
import { enc, storeError } from './store-test-helpers';

describe('embedded store specifics', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-embedded-'));
  });
  afterEach(() => fs.rm(dataDir, { recursive: true, force: true }));

  test('a second open of the same data dir fails while the first is open', async () => {
    const first = createStore({ kind: 'embedded', dataDir });
    try {
      expect(() => createStore({ kind: 'embedded', dataDir })).toThrow(/in use by another process/);
    } finally {
      await first.close();
    }
    await createStore({ kind: 'embedded', dataDir }).close();
  });

  test('reopening resumes the revision even when compaction removed the newest row', async () => {
    const store = createStore({ kind: 'embedded', dataDir });
    const kv = await store.create('/registry/a', enc('x'));
    const { revision: deletedAt } = await store.delete(kv.key);
    // Compacting at the tombstone's revision removes that row, the newest in the log.
    await store.compact(deletedAt);
    await store.close();

    const reopened = createStore({ kind: 'embedded', dataDir });
    try {
      expect(await reopened.currentRevision()).toBe(deletedAt);
      expect(await reopened.compactedRevision()).toBe(deletedAt);
      expect((await storeError(reopened.get(kv.key, { revision: kv.modRevision }))).code).toBe('compacted');
      expect((await reopened.create(kv.key, enc('y'))).modRevision).toBe(deletedAt + 1);
    } finally {
      await reopened.close();
    }
  });
});
