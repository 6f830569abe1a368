/**
 * The service-account controller against a real core on the embedded store: a `default`
 * ServiceAccount in every namespace, existing ones included, recreated when deleted.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ServiceAccountController } from '../../src/controllers';
import { createCore, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { systemClock } from '../../src/clock';
import { StatusError } from '../../src/status';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const namespaces = { group: '', version: 'v1', resource: 'namespaces' };
const sa = (namespace: string, name = 'default') => ({ group: '', version: 'v1', resource: 'serviceaccounts', namespace, name });

let dir: string;
let core: Core;
let controller: ServiceAccountController;

async function exists(namespace: string): Promise<boolean> {
  try {
    await core.get(sa(namespace), {}, admin);
    return true;
  } catch (err) {
    if (StatusError.is(err, 'NotFound')) return false;
    throw err;
  }
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-sa-controller-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  await core.ready();
  await core.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'before' } }, {}, admin);
  controller = new ServiceAccountController({ core, user: admin.user, clock: systemClock });
  controller.start();
});

afterAll(async () => {
  controller.stop();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

test('namespaces that existed before the controller, the system ones and new ones get `default`', async () => {
  await until('before/default', () => exists('before'));
  await until('default/default', () => exists('default'));
  await until('kube-system/default', () => exists('kube-system'));
  await core.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'later' } }, {}, admin);
  await until('later/default', () => exists('later'));
});

test('a deleted `default` comes back; other accounts are left alone', async () => {
  await until('before/default', () => exists('before'));
  await core.create({ group: '', version: 'v1', resource: 'serviceaccounts', namespace: 'before' }, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } }, {}, admin);
  const first = await core.get(sa('before'), {}, admin);
  await core.delete(sa('before'), {}, admin);
  await until('a new before/default', async () => (await exists('before')) && (await core.get(sa('before'), {}, admin)).metadata?.uid !== first.metadata?.uid);
  await core.delete(sa('before', 'bot'), {}, admin);
  await new Promise((r) => setTimeout(r, 100));
  await expect(core.get(sa('before', 'bot'), {}, admin)).rejects.toMatchObject({ status: { reason: 'NotFound' } });
});
