/**
 * core/v1 Service through a real core on the embedded store: upstream's defaults, validation
 * messages, cluster IP and node port allocation from the configured ranges (a /29 runs out),
 * requested values honoured or refused, release on delete and on type change, the `kubernetes`
 * Service, and two cores on one store never handing out the same IP.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ApiObject, type Core, type RequestContext, type Service, createCore } from '../../../src/core';
import { builtinResources } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { createStore, type Store } from '../../../src/store';
import { StatusError } from '../../../src/status';

const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const naming = createNaming('kubernetes');
const SERVICES = { group: '', version: 'v1', resource: 'services', namespace: 'default' };
const dirs: string[] = [];
const cores: Core[] = [];

async function open(store?: Store, serving: 'at-create' | 'at-ready' | 'never' = 'at-create'): Promise<{ core: Core; store: Store }> {
  let s = store;
  if (!s) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-svc-'));
    dirs.push(dir);
    s = createStore({ kind: 'embedded', dataDir: dir });
  }
  const core = createCore({
    store: s,
    naming,
    compactionIntervalMs: 0,
    resources: builtinResources(naming),
    services: {
      clusterIPRange: '10.96.0.0/29',
      nodePortRange: '30000-30004',
      ...(serving === 'at-create' ? { loopback: { host: '127.0.0.1', port: 6443 } } : {}),
    },
  });
  cores.push(core);
  await core.ready(serving === 'at-ready' ? { host: '127.0.0.1', port: 41234 } : undefined);
  return { core, store: s };
}

afterAll(async () => {
  for (const core of cores) await core.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const svc = (name: string, spec: Record<string, unknown>): ApiObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });

async function refusal(p: Promise<unknown>): Promise<{ code?: number; message?: string; causes?: { field?: string; message?: string }[] }> {
  try {
    await p;
  } catch (err) {
    if (StatusError.is(err)) return { code: err.status.code, message: err.status.message, causes: err.status.details?.causes };
    throw err;
  }
  throw new Error('succeeded');
}

describe('Services', () => {
  let core: Core;
  beforeAll(async () => {
    ({ core } = await open());
  });

  it("keeps the kubernetes Service at the range's first address, port https 443 to the secure port", async () => {
    const k = (await core.get({ ...SERVICES, name: 'kubernetes' }, {}, ADMIN)) as Service;
    expect(k.spec).toMatchObject({
      clusterIP: '10.96.0.1',
      clusterIPs: ['10.96.0.1'],
      type: 'ClusterIP',
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
    });
    expect(k.metadata?.labels).toEqual({ component: 'apiserver', provider: 'kubernetes' });
  });

  it("fills upstream's defaults and allocates a cluster IP", async () => {
    const { object } = await core.create(SERVICES, svc('web', { selector: { app: 'web' }, ports: [{ port: 80 }] }), {}, ADMIN);
    const s = object as Service;
    expect(s.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
    });
    expect(s.spec?.clusterIP).toMatch(/^10\.96\.0\.[2-6]$/);
    expect(s.spec?.clusterIPs).toEqual([s.spec?.clusterIP]);
    expect(s.status).toEqual({ loadBalancer: {} });
  });

  it('refuses bad input with upstream paths and messages', async () => {
    const bad = await refusal(core.create(SERVICES, svc('bad', { ports: [{ port: 0 }, { port: 80, protocol: 'HTTP' }], type: 'Weird' }), {}, ADMIN));
    expect(bad.code).toBe(422);
    const messages = bad.causes?.map((c) => `${c.field}: ${c.message}`) ?? [];
    expect(messages).toEqual(
      expect.arrayContaining([
        'spec.ports[0].name: Required value',
        'spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
        'spec.ports[1].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
        'spec.type: Unsupported value: "Weird": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      ]),
    );
    const ext = await refusal(core.create(SERVICES, svc('ext', { type: 'ExternalName', clusterIP: '10.96.0.5' }), {}, ADMIN));
    expect(ext.causes?.map((c) => `${c.field}: ${c.message}`)).toEqual(
      expect.arrayContaining(['spec.clusterIPs: Forbidden: may not be set for ExternalName services', 'spec.externalName: Required value']),
    );
    const dup = await refusal(
      core.create(
        SERVICES,
        svc('dup', {
          ports: [
            { name: 'a', port: 80 },
            { name: 'b', port: 80 },
          ],
        }),
        {},
        ADMIN,
      ),
    );
    expect(dup.causes?.[0]?.message).toBe(
      'Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}',
    );
    const name = await refusal(core.create(SERVICES, svc('1abc', { ports: [{ port: 80 }] }), {}, ADMIN));
    expect(name.causes?.[0]?.field).toBe('metadata.name');
  });

  it('honours a requested IP and refuses one taken or out of range', async () => {
    // Dynamic picks are random: ask for one that `web` did not get.
    const web = (await core.get({ ...SERVICES, name: 'web' }, {}, ADMIN)) as Service;
    const ip = web.spec?.clusterIP === '10.96.0.6' ? '10.96.0.5' : '10.96.0.6';
    const { object } = await core.create(SERVICES, svc('fixed', { clusterIP: ip, ports: [{ port: 80 }] }), {}, ADMIN);
    expect((object as Service).spec?.clusterIPs).toEqual([ip]);
    const taken = await refusal(core.create(SERVICES, svc('again', { clusterIP: ip, ports: [{ port: 80 }] }), {}, ADMIN));
    expect(taken).toMatchObject({ code: 422 });
    expect(taken.causes?.[0]).toEqual({
      reason: 'FieldValueInvalid',
      field: 'spec.clusterIPs',
      message: `Invalid value: []string{"${ip}"}: failed to allocate IP ${ip}: provided IP is already allocated`,
    });
    const outside = await refusal(core.create(SERVICES, svc('outside', { clusterIP: '10.1.0.9', ports: [{ port: 80 }] }), {}, ADMIN));
    expect(outside.causes?.[0]?.message).toBe(
      'Invalid value: []string{"10.1.0.9"}: failed to allocate IP 10.1.0.9: the provided IP (10.1.0.9) is not in the valid range. The range of valid IPs is 10.96.0.0/29',
    );
  });

  it('runs out of a /29, and a deleted Service gives its IP back', async () => {
    // .1 kubernetes, web, fixed: three of six left.
    const names = ['a1', 'a2', 'a3'];
    for (const n of names) await core.create(SERVICES, svc(n, { ports: [{ port: 80 }] }), {}, ADMIN);
    const full = await refusal(core.create(SERVICES, svc('a4', { ports: [{ port: 80 }] }), {}, ADMIN));
    expect(full).toMatchObject({ code: 500, message: 'Internal error occurred: failed to allocate a serviceIP: range is full' });
    const gone = (await core.get({ ...SERVICES, name: 'a2' }, {}, ADMIN)) as Service;
    await core.delete({ ...SERVICES, name: 'a2' }, {}, ADMIN);
    const { object } = await core.create(SERVICES, svc('a4', { ports: [{ port: 80 }] }), {}, ADMIN);
    expect((object as Service).spec?.clusterIP).toBe(gone.spec?.clusterIP);
    // A headless Service takes none.
    const headless = await core.create(SERVICES, svc('hl', { clusterIP: 'None', selector: { a: 'b' }, ports: [{ port: 80 }] }), {}, ADMIN);
    expect((headless.object as Service).spec).toMatchObject({ clusterIP: 'None', clusterIPs: ['None'], ipFamilyPolicy: 'SingleStack' });
  });

  it('gives NodePort Services node ports, requested or free, and releases them on a type change', async () => {
    for (const name of ['a1', 'a3', 'a4']) await core.delete({ ...SERVICES, name }, {}, ADMIN);
    const np = (
      await core.create(
        SERVICES,
        svc('np', { type: 'NodePort', ports: [{ port: 80 }, { name: 'b', port: 81, nodePort: 30004 }].map((p, i) => ({ name: `p${i}`, ...p })) }),
        {},
        ADMIN,
      )
    ).object as Service;
    expect(np.spec?.externalTrafficPolicy).toBe('Cluster');
    expect(np.spec?.ports?.[1]?.nodePort).toBe(30004);
    expect(np.spec?.ports?.[0]?.nodePort).toBeGreaterThanOrEqual(30000);
    const clash = await refusal(core.create(SERVICES, svc('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 30004 }] }), {}, ADMIN));
    expect(clash.causes?.[0]).toMatchObject({ field: 'spec.ports[0].nodePort', message: 'Invalid value: 30004: provided port is already allocated' });
    const range = await refusal(core.create(SERVICES, svc('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }), {}, ADMIN));
    expect(range.causes?.[0]?.message).toBe('Invalid value: 31000: provided port is not in the valid range. The range of valid ports is 30000-30004');
    // Back to ClusterIP: the node ports go, and 30004 is free again.
    const back = deepClone(np);
    back.spec!.type = 'ClusterIP';
    delete back.spec!.externalTrafficPolicy;
    const updated = (await core.update({ ...SERVICES, name: 'np' }, back, {}, ADMIN)).object as Service;
    expect(updated.spec?.ports?.map((p) => p.nodePort)).toEqual([undefined, undefined]);
    expect(updated.spec?.clusterIP).toBe(np.spec?.clusterIP);
    const reuse = (await core
      .create(SERVICES, svc('np4', { type: 'NodePort', clusterIP: 'None', ports: [{ port: 80, nodePort: 30004 }] }), {}, ADMIN)
      .catch((e) => e)) as unknown;
    expect(StatusError.is(reuse) ? reuse.status.details?.causes?.map((c) => c.message) : []).toEqual([
      'Invalid value: "None": may not be set to \'None\' for NodePort services',
    ]);
  });

  it('refuses a cluster IP change', async () => {
    const web = (await core.get({ ...SERVICES, name: 'web' }, {}, ADMIN)) as Service;
    const other = web.spec?.clusterIP === '10.96.0.3' ? '10.96.0.4' : '10.96.0.3';
    const next = deepClone(web);
    next.spec!.clusterIP = other;
    next.spec!.clusterIPs = [other];
    const err = await refusal(core.update({ ...SERVICES, name: 'web' }, next, {}, ADMIN));
    expect(err.causes?.map((c) => `${c.field}: ${c.message}`)).toContain(`spec.clusterIPs[0]: Invalid value: []string{"${other}"}: may not change once set`);
  });
});

describe('a server whose port is chosen at listen time', () => {
  it('keeps the kubernetes Service with the port it is told at ready, and resolves port 443 there', async () => {
    const { core } = await open(undefined, 'at-ready');
    const k = (await core.get({ ...SERVICES, name: 'kubernetes' }, {}, ADMIN)) as Service;
    expect(k.spec?.ports).toEqual([{ name: 'https', protocol: 'TCP', port: 443, targetPort: 41234 }]);
    expect(k.spec?.clusterIP).toBe('10.96.0.1');
    await expect(core.services!.resolve({ namespace: 'default', name: 'kubernetes', port: 443 })).resolves.toMatchObject({
      host: '127.0.0.1',
      port: 41234,
      serverName: 'kubernetes.default.svc',
    });
  });

  it('sets the target port right when a server on the same store starts listening elsewhere', async () => {
    const first = await open(undefined, 'at-ready');
    const again = await open(first.store, 'at-create');
    const k = (await again.core.get({ ...SERVICES, name: 'kubernetes' }, {}, ADMIN)) as Service;
    expect(k.spec?.ports?.map((p) => p.targetPort)).toEqual([6443]);
  });

  it('keeps none while it is not told where it listens (a core-only process)', async () => {
    const { core } = await open(undefined, 'never');
    const err = await refusal(core.get({ ...SERVICES, name: 'kubernetes' }, {}, ADMIN));
    expect(err).toMatchObject({ code: 404, message: 'services "kubernetes" not found' });
    // Without the loopback, the kubernetes Service is resolved like any other: here, not found.
    await expect(core.services!.resolve({ namespace: 'default', name: 'kubernetes' })).rejects.toThrow('service "kubernetes" not found');
  });
});

describe('two servers on one store', () => {
  it('never hand out the same cluster IP', async () => {
    const first = await open();
    const second = await open(first.store);
    const made = await Promise.all(
      ['x1', 'x2', 'x3', 'x4', 'x5'].map((n, i) => (i % 2 === 0 ? first.core : second.core).create(SERVICES, svc(n, { ports: [{ port: 80 }] }), {}, ADMIN)),
    );
    const ips = made.map((r) => (r.object as Service).spec?.clusterIP);
    expect(new Set(ips).size).toBe(5);
    expect(ips).not.toContain('10.96.0.1');
  });
});

function deepClone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
