import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore } from '../src/core';
import { createStore } from '../src/store';
import { createNaming } from '../src/naming';
import { ManualClock } from '../src/clock';
it('x', async () => {
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir: mkdtempSync(join(tmpdir(), 'a2-')) }), naming: createNaming('kubernetes'), clock: new ManualClock(Date.UTC(2026, 0, 1)) });
  await core.ready();
  const admin = { user: { username: 'admin', groups: ['system:masters'] } };
  const t = { group: 'apps', version: 'v1', resource: 'replicasets', namespace: 'default', name: 'applied' };
  const config = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'applied', namespace: 'default' }, spec: { replicas: 0, minReadySeconds: 0, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27', stdin: false }] } } } };
  const a = await core.patch(t, { type: 'apply', body: config }, { fieldManager: 'tester' }, admin);
  const b = await core.patch(t, { type: 'apply', body: config }, { fieldManager: 'tester' }, admin);
  console.log(JSON.stringify(a.object), '\n', JSON.stringify(b.object));
  await core.close();
});
