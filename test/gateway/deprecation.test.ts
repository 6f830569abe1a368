/**
 * A version marked deprecated (in this test's build of the types: no version served in 1.32 is)
 * gets the spec's three signals on every request: the Warning header with upstream's text, the
 * audit annotations, and apiserver_requested_deprecated_apis = 1. Other versions get none.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type Core } from '../../src/core';
import { builtinResources } from '../../src/core/resources';
import { type AuditEvent, parseAuditPolicy } from '../../src/gateway';
import { deprecationWarning } from '../../src/gateway/handlers/deprecation';
import { ServerMetrics } from '../../src/metrics';
import { createNaming } from '../../src/naming';
import { createStore } from '../../src/store';
import { systemClock } from '../../src/clock';
import { ADMIN_CERT, RecordingResponse, fakeRequest } from './support/http';
import { gatewayOverCore } from '../../tools/bench/core-gateway';

const naming = createNaming('kubernetes');
let dir: string;
let core: Core;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-deprecation-'));
  const resources = builtinResources(naming).map((d) =>
    d.resource === 'replicasets'
      ? { ...d, deprecation: { deprecatedIn: '1.30', removedIn: '1.33', replacement: { group: 'apps', version: 'v2', kind: 'ReplicaSet' } } }
      : d,
  );
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, resources, compactionIntervalMs: 0 });
  await core.ready();
});

afterAll(async () => {
  await core.close();
  await rm(dir, { recursive: true, force: true });
});

test('requests to a deprecated version get the Warning, the audit annotations and the gauge', async () => {
  const metrics = new ServerMetrics();
  const events: AuditEvent[] = [];
  const gateway = gatewayOverCore(core, naming, {
    metrics,
    audit: {
      policy: parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n', naming),
      sink: (e) => void events.push(e),
      naming,
      clock: systemClock,
    },
  });
  const call = async (url: string) => {
    const response = new RecordingResponse();
    await gateway.handle(fakeRequest({ url, cert: ADMIN_CERT }), response);
    return response;
  };

  const deprecated = await call('/apis/apps/v1/namespaces/default/replicasets');
  expect(deprecated.status).toBe(200);
  expect(deprecated.header('warning')).toEqual(['299 - "apps/v1 ReplicaSet is deprecated in v1.30+, unavailable in v1.33+; use apps/v2 ReplicaSet"']);
  expect(events[0]!.annotations).toMatchObject({ 'k8s.io/deprecated': 'true', 'k8s.io/removed-release': '1.33' });
  expect((await metrics.text()).body).toContain(
    'apiserver_requested_deprecated_apis{group="apps",version="v1",resource="replicasets",subresource="",removed_release="1.33"} 1',
  );

  const current = await call('/api/v1/namespaces/default/configmaps');
  expect(current.status).toBe(200);
  expect(current.header('warning')).toBeUndefined();
  expect(events[1]!.annotations).not.toHaveProperty('k8s.io/deprecated');
});

test('the warning text follows upstream: removal and replacement only when known, the core group by version alone', () => {
  const [configmaps] = builtinResources(naming).filter((d) => d.resource === 'configmaps');
  expect(deprecationWarning(configmaps!, { deprecatedIn: '1.31' })).toBe('v1 ConfigMap is deprecated in v1.31+');
});
