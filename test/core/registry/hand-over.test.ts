/**
 * A write's body is copied before the core changes it, unless a door handed it over (freshly
 * decoded, used by nothing else): a controller's or library user's object stays as it was.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type Core } from '../../../src/core';
import { handOver, takeHandedOver, type ApiObject } from '../../../src/core/api';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';

let dir: string;
let core: Core;
const ctx = () => ({ user: { username: 'admin', groups: ['system:masters'] } });
const target = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const configMap = (name: string): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-handover-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
  await core.ready();
});

afterAll(async () => {
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('write bodies', () => {
  it("are copied when the caller keeps them: the caller's object is unchanged", async () => {
    const mine = configMap('kept');
    const before = JSON.stringify(mine);
    const { object } = await core.create(target, mine, {}, ctx());
    expect(JSON.stringify(mine)).toBe(before);
    expect(object).not.toBe(mine);
    expect(object.metadata).toMatchObject({ name: 'kept', namespace: 'default', uid: expect.any(String), resourceVersion: expect.any(String) });
  });

  it('are taken as they are when handed over, and the mark is used once', async () => {
    const decoded = handOver(configMap('taken'));
    const { object } = await core.create(target, decoded, {}, ctx());
    expect(object).toBe(decoded);
    expect(object.metadata?.uid).toEqual(expect.any(String));
    expect(takeHandedOver(decoded)).toBe(false);
    // Stored as written: a read gives the same content.
    const read = await core.get({ ...target, name: 'taken' }, {}, ctx());
    expect(read.data).toEqual({ a: '1' });
    expect(read.metadata?.resourceVersion).toBe(object.metadata?.resourceVersion);
  });

  it('ignore what is not an object', () => {
    expect(handOver(null)).toBeNull();
    expect(handOver('text')).toBe('text');
  });
});
