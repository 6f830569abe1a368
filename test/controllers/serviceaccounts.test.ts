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
import { eventually } from '../support/eventually';

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
  await eventually(() => exists('before'), { what: 'before/default' });
  await eventually(() => exists('default'), { what: 'default/default' });
  await eventually(() => exists('kube-system'), { what: 'kube-system/default' });
  await core.create(namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'later' } }, {}, admin);
  await eventually(() => exists('later'), { what: 'later/default' });
});

test('a deleted `default` comes back; other accounts are left alone', async () => {
  await eventually(() => exists('before'), { what: 'before/default' });
  await core.create(
    { group: '', version: 'v1', resource: 'serviceaccounts', namespace: 'before' },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } },
    {},
    admin,
  );
  const first = await core.get(sa('before'), {}, admin);
  await core.delete(sa('before'), {}, admin);
  await eventually(async () => (await exists('before')) && (await core.get(sa('before'), {}, admin)).metadata?.uid !== first.metadata?.uid, {
    what: 'a new before/default',
  });
  await core.delete(sa('before', 'bot'), {}, admin);
  // The controller has synced the namespace since: it brought back a `default` deleted after `bot`.
  const second = await core.get(sa('before'), {}, admin);
  await core.delete(sa('before'), {}, admin);
  await eventually(async () => (await exists('before')) && (await core.get(sa('before'), {}, admin)).metadata?.uid !== second.metadata?.uid, {
    what: 'a third before/default',
  });
  await expect(core.get(sa('before', 'bot'), {}, admin)).rejects.toMatchObject({ status: { reason: 'NotFound' } });
});
