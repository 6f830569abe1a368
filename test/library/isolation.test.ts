/**
 * Servers in one process share nothing (issue 51): two library servers with different naming
 * profiles and schemas each serve their own discovery, OpenAPI, objects, watch events and
 * managedFields, before and after the other is stopped; and the cores they run each keep their
 * own tables (the created objects' field sets remembered per shape, the watch cache's shared
 * field sets), which no request can see.
 */
import https from 'node:https';
import { type RunningServer, startServer } from '../../src/library';
import { type Core, createCore } from '../../src/core';
import { type ApiObject, handOver } from '../../src/core/api';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { eventually } from '../support/eventually';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request as the server's admin (its own client certificate, its own CA). */
function request(server: RunningServer, method: string, path: string, body?: unknown): Promise<Answer> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method,
        ca: server.ca,
        cert: server.adminCredentials.cert,
        key: server.adminCredentials.key,
        agent: false,
        headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function json(server: RunningServer, path: string): Promise<any> {
  const answer = await request(server, 'GET', path);
  expect(answer.status).toBe(200);
  return JSON.parse(answer.body);
}

interface WatchEventSeen {
  type: string;
  object: ApiObject;
}

/** A watch of `path` as the server's admin: the events it has delivered so far. */
function openWatch(server: RunningServer, path: string): { events: WatchEventSeen[]; close(): void } {
  const events: WatchEventSeen[] = [];
  let buffered = '';
  const req = https.request(
    new URL(path, server.url),
    { ca: server.ca, cert: server.adminCredentials.cert, key: server.adminCredentials.key, agent: false },
    (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim() !== '') events.push(JSON.parse(line) as WatchEventSeen);
        }
      });
      res.on('error', () => undefined);
    },
  );
  req.on('error', () => undefined);
  req.end();
  return { events, close: () => req.destroy() };
}

const names = (events: readonly WatchEventSeen[]) => events.map((e) => `${e.type} ${e.object.metadata?.name}`);
const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

describe('two library servers in one process', () => {
  // Upstream's names, with the policy group switched off; and the platform profile's names, all groups on.
  let upstream: RunningServer;
  let platform: RunningServer;
  let upstreamStopped = false;

  beforeAll(async () => {
    [upstream, platform] = await Promise.all([
      startServer({ vendor: 'kubernetes', controllers: [], simulatedNodes: 0, flags: ['--runtime-config', 'policy/v1=false'] }),
      startServer({ vendor: 'platform', controllers: [], simulatedNodes: 0 }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([upstreamStopped ? undefined : upstream?.stop(), platform?.stop()]);
  });

  it('serve each their own discovery: their own names, their own groups', async () => {
    const groupsOf = async (server: RunningServer) => ((await json(server, '/apis')).groups as { name: string }[]).map((g) => g.name);
    const [up, pl] = await Promise.all([groupsOf(upstream), groupsOf(platform)]);
    expect(up).toContain('rbac.authorization.k8s.io');
    expect(up).not.toContain('policy');
    expect(up.filter((g) => g.endsWith('.platform.io'))).toEqual([]);
    expect(pl).toContain('rbac.authorization.platform.io');
    expect(pl).toContain('policy');
    expect(pl.filter((g) => g.endsWith('.k8s.io'))).toEqual([]);
    expect((await request(upstream, 'GET', '/apis/policy/v1')).status).toBe(404);
    expect((await request(platform, 'GET', '/apis/policy/v1')).status).toBe(200);
  });

  it('serve each their own OpenAPI documents', async () => {
    const [up, pl] = await Promise.all([json(upstream, '/openapi/v2'), json(platform, '/openapi/v2')]);
    const paths = (doc: any) => Object.keys(doc.paths as object);
    expect(paths(up).filter((p) => p.startsWith('/apis/policy/'))).toEqual([]);
    expect(paths(pl).filter((p) => p.startsWith('/apis/policy/v1/')).length).toBeGreaterThan(0);
    expect(paths(up).some((p) => p.startsWith('/apis/rbac.authorization.k8s.io/'))).toBe(true);
    expect(paths(pl).some((p) => p.includes('k8s.io'))).toBe(false);
    const configMapOf = (doc: any) => Object.entries(doc.definitions as Record<string, any>).find(([name]) => name.endsWith('.core.v1.ConfigMap'))![1];
    expect(configMapOf(up)).toHaveProperty('x-kubernetes-group-version-kind');
    expect(configMapOf(pl)).toHaveProperty('x-platform-group-version-kind');
    const [upIndex, plIndex] = await Promise.all([json(upstream, '/openapi/v3'), json(platform, '/openapi/v3')]);
    expect(Object.keys(upIndex.paths)).not.toContain('apis/policy/v1');
    expect(Object.keys(plIndex.paths)).toContain('apis/policy/v1');
    const etag = async (server: RunningServer) => (await request(server, 'GET', '/openapi/v2')).headers.etag;
    expect(await etag(upstream)).not.toBe(await etag(platform));
  });

  it('keep each their own objects, under one name too', async () => {
    expect((await request(upstream, 'POST', CONFIGMAPS, configMap('same-name', { server: 'upstream' }))).status).toBe(201);
    expect((await request(platform, 'POST', CONFIGMAPS, configMap('same-name', { server: 'platform' }))).status).toBe(201);
    expect((await request(upstream, 'POST', CONFIGMAPS, configMap('only-upstream', { server: 'upstream' }))).status).toBe(201);
    expect((await json(upstream, `${CONFIGMAPS}/same-name`)).data).toEqual({ server: 'upstream' });
    expect((await json(platform, `${CONFIGMAPS}/same-name`)).data).toEqual({ server: 'platform' });
    expect((await request(platform, 'GET', `${CONFIGMAPS}/only-upstream`)).status).toBe(404);
  });

  it('write each their own managedFields: the same create by the same manager, in each server its own', async () => {
    const role = (name: string) => ({ metadata: { name }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }] });
    const created = await Promise.all(
      [upstream, platform].map(async (server, i) => {
        const group = i === 0 ? 'rbac.authorization.k8s.io' : 'rbac.authorization.platform.io';
        const answer = await request(server, 'POST', `/apis/${group}/v1/namespaces/default/roles?fieldManager=isolation`, {
          apiVersion: `${group}/v1`,
          kind: 'Role',
          ...role('reader'),
        });
        expect(answer.status).toBe(201);
        return { group, object: JSON.parse(answer.body) as ApiObject };
      }),
    );
    for (const { group, object } of created) {
      const [entry] = object.metadata!.managedFields!;
      expect(entry).toMatchObject({ manager: 'isolation', operation: 'Update', apiVersion: `${group}/v1` });
    }
    expect(created[0]!.object.metadata!.managedFields![0]!.fieldsV1).toEqual(created[1]!.object.metadata!.managedFields![0]!.fieldsV1);
  });

  it("deliver each watcher its own server's events only", async () => {
    const rvOf = async (server: RunningServer) => (await json(server, CONFIGMAPS)).metadata.resourceVersion as string;
    const [upRv, plRv] = await Promise.all([rvOf(upstream), rvOf(platform)]);
    const onUpstream = openWatch(upstream, `${CONFIGMAPS}?watch=true&resourceVersion=${upRv}`);
    const onPlatform = openWatch(platform, `${CONFIGMAPS}?watch=true&resourceVersion=${plRv}`);
    try {
      expect((await request(upstream, 'POST', CONFIGMAPS, configMap('watched-upstream', { k: 'v' }))).status).toBe(201);
      expect((await request(platform, 'POST', CONFIGMAPS, configMap('watched-platform', { k: 'v' }))).status).toBe(201);
      // The same change twice in one server: every watcher of it gets the same frame, no other server's.
      expect((await request(upstream, 'POST', CONFIGMAPS, configMap('watched-upstream-2', { k: 'v' }))).status).toBe(201);
      await eventually(() => onUpstream.events.length >= 2 && onPlatform.events.length >= 1, { what: 'both watchers to hear their events' });
      expect(names(onUpstream.events)).toEqual(['ADDED watched-upstream', 'ADDED watched-upstream-2']);
      expect(names(onPlatform.events)).toEqual(['ADDED watched-platform']);
    } finally {
      onUpstream.close();
      onPlatform.close();
    }
  });

  it('serve on unchanged once the other is stopped: objects, watches, discovery, OpenAPI', async () => {
    const etagBefore = (await request(platform, 'GET', '/openapi/v2')).headers.etag;
    const rv = (await json(platform, CONFIGMAPS)).metadata.resourceVersion as string;
    const onPlatform = openWatch(platform, `${CONFIGMAPS}?watch=true&resourceVersion=${rv}`);
    try {
      upstreamStopped = true;
      await upstream.stop();
      await expect(request(upstream, 'GET', '/api')).rejects.toThrow();
      expect((await json(platform, `${CONFIGMAPS}/same-name`)).data).toEqual({ server: 'platform' });
      expect((await request(platform, 'GET', `${CONFIGMAPS}/only-upstream`)).status).toBe(404);
      expect((await request(platform, 'POST', CONFIGMAPS, configMap('after-stop', { k: 'v' }))).status).toBe(201);
      await eventually(() => onPlatform.events.length >= 1, { what: "the platform server's watcher to hear its create" });
      expect(names(onPlatform.events)).toEqual(['ADDED after-stop']);
      expect(((await json(platform, '/apis')).groups as { name: string }[]).map((g) => g.name)).toContain('policy');
      expect((await request(platform, 'GET', '/openapi/v2')).headers.etag).toBe(etagBefore);
    } finally {
      onPlatform.close();
    }
  });
});

describe('two cores in one process (what each library server runs)', () => {
  const target = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
  const ctx = () => ({ user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'isolation/1.0' });
  let upstream: Core;
  let platform: Core;
  let upstreamClosed = false;

  beforeAll(async () => {
    upstream = createCore({ store: createStore({ kind: 'embedded', inMemory: true }), naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
    platform = createCore({ store: createStore({ kind: 'embedded', inMemory: true }), naming: createNaming('platform'), compactionIntervalMs: 0 });
    await Promise.all([upstream.ready(), platform.ready()]);
  });

  afterAll(async () => {
    await Promise.all([upstreamClosed ? undefined : upstream?.close(), platform?.close()]);
  });

  const fieldSetOf = (object: ApiObject) => object.metadata!.managedFields![0]!.fieldsV1;
  /** The watch cache's object, once it has seen everything written so far. */
  async function cached(core: Core, name: string): Promise<ApiObject> {
    await core.get({ ...target, name }, {}, ctx());
    return core.get({ ...target, name }, { resourceVersion: '0' }, ctx());
  }

  it("keep their own tables: a created shape's field set, and the field sets their caches share", async () => {
    // A door's creates (handed over): the cache takes the written object, whose field set is the
    // one its core remembered for the shape.
    for (const [core, name] of [
      [upstream, 'one'],
      [upstream, 'two'],
      [platform, 'one'],
    ] as const) {
      await core.create(target, handOver(configMap(name, { a: '1' }) as ApiObject), {}, ctx());
    }
    const [one, two, otherOne] = await Promise.all([cached(upstream, 'one'), cached(upstream, 'two'), cached(platform, 'one')]);
    expect(fieldSetOf(two)).toBe(fieldSetOf(one));
    expect(fieldSetOf(otherOne)).toEqual(fieldSetOf(one));
    expect(fieldSetOf(otherOne)).not.toBe(fieldSetOf(one));
    // In-process creates (the caller keeps its object): the cache decodes the stored bytes and
    // points the objects at one frozen copy of each set, from its own table.
    for (const [core, name] of [
      [upstream, 'three'],
      [upstream, 'four'],
      [platform, 'three'],
    ] as const) {
      await core.create(target, configMap(name, { b: name }) as ApiObject, {}, ctx());
    }
    const [three, four, otherThree] = await Promise.all([cached(upstream, 'three'), cached(upstream, 'four'), cached(platform, 'three')]);
    expect(fieldSetOf(four)).toBe(fieldSetOf(three));
    expect(fieldSetOf(otherThree)).toEqual(fieldSetOf(three));
    expect(fieldSetOf(otherThree)).not.toBe(fieldSetOf(three));
  });

  it('one closed, the other reads, writes and shares its field sets as before', async () => {
    const before = await cached(platform, 'three');
    upstreamClosed = true;
    await upstream.close();
    await platform.create(target, configMap('five', { b: 'five' }) as ApiObject, {}, ctx());
    expect(fieldSetOf(await cached(platform, 'five'))).toBe(fieldSetOf(before));
    expect((await platform.get({ ...target, name: 'one' }, {}, ctx())).data).toEqual({ a: '1' });
  });
});
