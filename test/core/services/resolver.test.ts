/**
 * The Service resolver (core/services/resolver.ts) over a real core on the embedded store:
 * upstream's ResolveCluster and ResolveEndpoint rules, the loopback for the `kubernetes`
 * Service, and the errors of a missing Service, port or endpoint.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ApiObject, type Core, type RequestContext, type ServiceResolver, createCore, createServiceResolver } from '../../../src/core';
import { builtinResources } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { createStore } from '../../../src/store';
import { StatusError } from '../../../src/status';

const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const naming = createNaming('kubernetes');
let core: Core;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-resolver-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0, resources: builtinResources(naming) });
  await core.ready();
  const svc = (name: string, spec: Record<string, unknown>): ApiObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec,
  });
  await core.create(
    { group: '', version: 'v1', resource: 'services', namespace: 'default' },
    svc('ext', { type: 'ExternalName', externalName: 'localhost' }),
    {},
    ADMIN,
  );
  await core.create(
    { group: '', version: 'v1', resource: 'services', namespace: 'default' },
    svc('web', { clusterIP: '10.0.0.77', clusterIPs: ['10.0.0.77'], ports: [{ name: 'https', port: 443, targetPort: 8443 }] }),
    {},
    ADMIN,
  );
  await core.create(
    { group: '', version: 'v1', resource: 'services', namespace: 'default' },
    svc('headless', { clusterIP: 'None', clusterIPs: ['None'], ports: [{ port: 443 }] }),
    {},
    ADMIN,
  );
  await core.create(
    { group: '', version: 'v1', resource: 'endpoints', namespace: 'default' },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'default' },
      subsets: [{ addresses: [{ ip: '10.244.0.5' }], ports: [{ name: 'https', port: 8443 }] }],
    },
    {},
    ADMIN,
  );
});

afterAll(async () => {
  await core.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function resolverOf(endpointRouting: boolean): ServiceResolver {
  return createServiceResolver({
    endpointRouting,
    loopback: () => ({ host: '127.0.0.1', port: 6443, namespace: 'default' }),
    read: async (resource, namespace, name) => {
      try {
        return await core.get({ group: '', version: 'v1', resource, namespace, name }, {}, ADMIN);
      } catch (err) {
        if (StatusError.is(err, 'NotFound')) return undefined;
        throw err;
      }
    },
  });
}

async function failure(p: Promise<unknown>): Promise<{ reason?: string; code?: number; message?: string }> {
  try {
    await p;
  } catch (err) {
    if (StatusError.is(err)) return { reason: err.status.reason, code: err.status.code, message: err.status.message };
    throw err;
  }
  throw new Error('resolved');
}

describe('the Service resolver', () => {
  it('resolves an ExternalName Service to its name and the reference port, verified as <name>.<namespace>.svc', async () => {
    await expect(resolverOf(false).resolve({ namespace: 'default', name: 'ext', port: 8443 })).resolves.toEqual({
      host: 'localhost',
      port: 8443,
      serverName: 'ext.default.svc',
      authority: 'localhost:8443',
    });
  });

  it('resolves a ClusterIP Service to its cluster IP and the Service port (443 by default)', async () => {
    const r = await resolverOf(false).resolve({ namespace: 'default', name: 'web' });
    expect(r).toEqual({ host: '10.0.0.77', port: 443, serverName: 'web.default.svc', authority: '10.0.0.77:443' });
  });

  it('with endpoint routing, resolves to a ready endpoint address and the port named like the Service port', async () => {
    const r = await resolverOf(true).resolve({ namespace: 'default', name: 'web', port: 443 });
    expect(r).toMatchObject({ host: '10.244.0.5', port: 8443, serverName: 'web.default.svc' });
  });

  it('resolves the kubernetes Service port 443 to the server itself (the loopback resolver)', async () => {
    const r = await resolverOf(false).resolve({ namespace: 'default', name: 'kubernetes', port: 443 });
    expect(r).toMatchObject({ host: '127.0.0.1', port: 6443, serverName: 'kubernetes.default.svc' });
  });

  it("answers upstream's errors: a missing Service, a port it lacks, a headless Service, no endpoints", async () => {
    const cluster = resolverOf(false);
    expect(await failure(cluster.resolve({ namespace: 'default', name: 'nope' }))).toMatchObject({
      reason: 'NotFound',
      code: 404,
      message: 'service "nope" not found',
    });
    expect(await failure(cluster.resolve({ namespace: 'default', name: 'web', port: 80 }))).toMatchObject({
      code: 503,
      message: 'no service port 80 found for service "web"',
    });
    expect(await failure(cluster.resolve({ namespace: 'default', name: 'headless' }))).toMatchObject({
      code: 500,
      message: 'cannot route to service with ClusterIP "None"',
    });
    expect(await failure(resolverOf(true).resolve({ namespace: 'default', name: 'headless' }))).toMatchObject({
      reason: 'NotFound',
      message: 'endpoints "headless" not found',
    });
  });
});
