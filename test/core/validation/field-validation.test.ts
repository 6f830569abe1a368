/**
 * fieldValidation (docs/API.md, "Field validation") on create bodies through the in-process core:
 * the gateway's strict decoders find repeated keys, the core finds unknown fields against the
 * schema, and both are reported in upstream's order and wording (the strings below are
 * upstream's field_validation integration test expectations, with a ReplicaSet for the
 * Deployment and `minReadySeconds` for `paused`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type Core, type FieldValidation, type RequestContext, type ResourceTarget } from '../../../src/core';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { ManualClock } from '../../../src/clock';
import { StatusError } from '../../../src/status';
import { decodeObject } from '../../../src/gateway/body';
import { jsonCodec, yamlCodec } from '../../../src/gateway/codecs';

const INVALID_JSON = `{
  "apiVersion": "apps/v1",
  "kind": "ReplicaSet",
  "metadata": {
    "name": "dupename",
    "name": "NAME",
    "labels": {"app": "nginx"},
    "unknownMeta": "metaVal"
  },
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "minReadySeconds": 1,
    "minReadySeconds": 2,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {
        "containers": [{
          "name": "nginx",
          "image": "nginx:latest",
          "unknownNested": "val1",
          "imagePullPolicy": "Always",
          "imagePullPolicy": "Never"
        }]
      }
    }
  }
}`;

const INVALID_YAML = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: dupename
  name: NAME
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  minReadySeconds: 1
  minReadySeconds: 2
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never`;

const JSON_ERRORS = [
  'duplicate field "metadata.name"',
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
  'duplicate field "spec.minReadySeconds"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
];
const YAML_DUPLICATES = [
  'line 5: key "name" already set in map',
  'line 12: key "unknownDupe" already set in map',
  'line 14: key "minReadySeconds" already set in map',
  'line 28: key "imagePullPolicy" already set in map',
];
const YAML_UNKNOWN = [
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
];

const rs = (name?: string): ResourceTarget => ({ group: 'apps', version: 'v1', resource: 'replicasets', namespace: 'default', name });

describe('fieldValidation on create', () => {
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-fv-'));
    core = createCore({
      store: createStore({ kind: 'embedded', dataDir: dir }),
      naming: createNaming('kubernetes'),
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
    });
    await core.ready();
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function create(body: string, format: 'json' | 'yaml', name: string, fieldValidation?: FieldValidation) {
    const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, warnings: [] };
    const { object, report } = decodeObject(format === 'json' ? jsonCodec : yamlCodec, Buffer.from(body.replace('NAME', name)));
    ctx.decodeReport = report;
    try {
      const result = await core.create(rs(), object, fieldValidation ? { fieldValidation } : {}, ctx);
      return { object: result.object, warnings: ctx.warnings! };
    } catch (err) {
      return { error: err as StatusError, warnings: ctx.warnings! };
    }
  }

  async function stored(name: string) {
    try {
      return await core.get(rs(name), {}, { user: { username: 'admin', groups: ['system:masters'] } });
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  it('Strict: 400 listing every unknown and repeated field of a JSON body in document order; nothing stored', async () => {
    const r = await create(INVALID_JSON, 'json', 'strict-json', 'Strict');
    expect(r.error?.code).toBe(400);
    expect(r.error?.reason).toBe('BadRequest');
    expect(r.error?.status.message).toBe(`ReplicaSet in version "v1" cannot be handled as a ReplicaSet: strict decoding error: ${JSON_ERRORS.join(', ')}`);
    expect(await stored('strict-json')).toBeUndefined();
  });

  it('Warn (and the default): one warning per field; unknown fields are dropped, repeated ones keep the last value', async () => {
    for (const [name, directive] of [
      ['warn-json', 'Warn'],
      ['default-json', undefined],
    ] as const) {
      const r = await create(INVALID_JSON, 'json', name, directive);
      expect(r.error).toBeUndefined();
      expect(r.warnings).toEqual(JSON_ERRORS);
      const obj = (await stored(name))!;
      expect(obj.metadata).not.toHaveProperty('unknownMeta');
      expect(obj.spec).not.toHaveProperty('unknown1');
      expect(obj.spec).not.toHaveProperty('unknownDupe');
      expect((obj.spec as { minReadySeconds: number }).minReadySeconds).toBe(2);
      const container = (obj.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template.spec.containers[0];
      expect(container).not.toHaveProperty('unknownNested');
      expect(container.imagePullPolicy).toBe('Never');
    }
  });

  it('Ignore: no warnings, unknown fields still dropped', async () => {
    const r = await create(INVALID_JSON, 'json', 'ignore-json', 'Ignore');
    expect(r.warnings).toEqual([]);
    expect((await stored('ignore-json'))!.spec).not.toHaveProperty('unknown1');
  });

  it("YAML: go-yaml's repeated-key error first (one warning per line), then unknown fields in sorted order", async () => {
    const strict = await create(INVALID_YAML, 'yaml', 'strict-yaml', 'Strict');
    expect(strict.error?.status.message).toBe(
      `ReplicaSet in version "v1" cannot be handled as a ReplicaSet: strict decoding error: yaml: unmarshal errors:\n  ${YAML_DUPLICATES.join('\n  ')}, ${YAML_UNKNOWN.join(', ')}`,
    );
    expect(await stored('strict-yaml')).toBeUndefined();
    const warn = await create(INVALID_YAML, 'yaml', 'warn-yaml');
    expect(warn.warnings).toEqual([...YAML_DUPLICATES, ...YAML_UNKNOWN]);
    expect(((await stored('warn-yaml'))!.spec as { minReadySeconds: number }).minReadySeconds).toBe(2);
  });

  it('repeated keys inside maps are reported with the map key in the path; inside RawExtension-like holes they are not checked', async () => {
    const body = `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"labels","labels":{"a":"1","a":"2"}},"spec":{"selector":{"matchLabels":{"x":"y"}},"template":{"metadata":{"labels":{"x":"y"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`;
    const r = await create(body, 'json', 'labels', 'Warn');
    expect(r.warnings).toEqual(['duplicate field "metadata.labels.a"']);
  });

  it('a value of the wrong JSON type is a 400 whatever fieldValidation says', async () => {
    const body = JSON.parse(INVALID_JSON.replace(/"minReadySeconds": 1,\n/, '').replace('"NAME"', '"typed"')) as Record<string, Record<string, unknown>>;
    body.spec.replicas = 'three';
    const r = await create(JSON.stringify(body), 'json', 'typed', 'Ignore');
    expect(r.error?.status.message).toBe(
      'ReplicaSet in version "v1" cannot be handled as a ReplicaSet: json: cannot unmarshal string into Go struct field ReplicaSetSpec.spec.replicas of type int32',
    );
    const nested = JSON.parse(JSON.stringify(body)) as typeof body;
    nested.spec.replicas = 1;
    (nested.spec.template as { spec: { containers: Record<string, unknown>[] } }).spec.containers[0].image = 5;
    expect((await create(JSON.stringify(nested), 'json', 'typed', 'Ignore')).error?.status.message).toBe(
      'ReplicaSet in version "v1" cannot be handled as a ReplicaSet: json: cannot unmarshal number into Go struct field Container.spec.template.spec.containers.image of type string',
    );
    nested.spec.template = 'x';
    expect((await create(JSON.stringify(nested), 'json', 'typed', 'Ignore')).error?.status.message).toMatch(
      /cannot unmarshal string into Go struct field ReplicaSetSpec\.spec\.template of type v1\.PodTemplateSpec$/,
    );
  });

  it('objects from in-process callers (no decoder record) still lose their unknown fields, with warnings', async () => {
    const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, warnings: [] };
    await core.create(
      { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' }, extra: 1 },
      {},
      ctx,
    );
    expect(ctx.warnings).toEqual(['unknown field "extra"']);
    const cm = await core.get({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' }, {}, ctx);
    expect(cm).not.toHaveProperty('extra');
  });
});

describe('Go\'s zero values on write (docs/API.md, "Field validation")', () => {
  let dir: string;
  let core: Core;
  const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-zero-'));
    core = createCore({
      store: createStore({ kind: 'embedded', dataDir: dir }),
      naming: createNaming('kubernetes'),
      clock: new ManualClock(Date.UTC(2026, 0, 1)),
    });
    await core.ready();
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  type Container = Record<string, unknown> & { ports?: Array<Record<string, unknown>> };
  const body = (name: string, container: Container = {}, podSpec: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, annotations: {}, finalizers: [], generateName: '' },
    spec: {
      replicas: 0,
      minReadySeconds: 0,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.27', ...container }], ...podSpec } },
      ...spec,
    },
  });
  const containerOf = (o: object) => ((o as { spec?: unknown }).spec as { template: { spec: { containers: Container[] } } }).template.spec.containers[0]!;
  const podSpecOf = (o: object) => ((o as { spec?: unknown }).spec as { template: { spec: Record<string, unknown> } }).template.spec;

  it('a create leaves out omitempty fields at their zero value, keeps pointers set to zero, and defaults what Go sees as unset', async () => {
    const created = await core.create(
      rs(),
      body(
        'zeros',
        { ports: [{ containerPort: 80, hostPort: 0, hostIP: '' }], stdin: false, imagePullPolicy: '', args: [], env: null },
        { hostNetwork: false, nodeName: '', terminationGracePeriodSeconds: null, volumes: [] },
      ),
      {},
      admin,
    );
    for (const obj of [created.object, await core.get(rs('zeros'), {}, admin)]) {
      expect(obj.metadata).not.toHaveProperty('annotations');
      expect(obj.metadata).not.toHaveProperty('finalizers');
      expect(obj.metadata).not.toHaveProperty('generateName');
      expect(obj.spec).toMatchObject({ replicas: 0 });
      expect(obj.spec).not.toHaveProperty('minReadySeconds');
      const container = containerOf(obj);
      expect(container.ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
      for (const field of ['stdin', 'args', 'env']) expect(container).not.toHaveProperty(field);
      // Go decodes "" as unset, so the default applies (IfNotPresent for a tagged image).
      expect(container.imagePullPolicy).toBe('IfNotPresent');
      const podSpec = podSpecOf(obj);
      for (const field of ['hostNetwork', 'nodeName', 'volumes']) expect(podSpec).not.toHaveProperty(field);
      expect(podSpec.terminationGracePeriodSeconds).toBe(30);
    }
  });

  it('a null scalar without omitempty is its zero value, and validation judges that (containerPort: null as 0)', async () => {
    const zero = await core.create(rs(), body('port-zero', { ports: [{ containerPort: 0 }] }), {}, admin).catch((e: StatusError) => e);
    const nul = await core.create(rs(), body('port-null', { ports: [{ containerPort: null }] }), {}, admin).catch((e: StatusError) => e);
    expect(StatusError.is(zero, 'Invalid')).toBe(true);
    expect((nul as StatusError).status.details?.causes).toEqual((zero as StatusError).status.details?.causes);
  });

  it('updates and patches are held to the same rules', async () => {
    const current = await core.get(rs('zeros'), {}, admin);
    const spec = JSON.parse(JSON.stringify(current.spec)) as Record<string, unknown>;
    (podSpecOf({ spec }) as Record<string, unknown>).hostPID = false;
    containerOf({ spec }).tty = false;
    const updated = await core.update(rs('zeros'), { ...current, spec: { ...spec, minReadySeconds: 0 } }, {}, admin);
    expect(updated.object.spec).not.toHaveProperty('minReadySeconds');
    expect(podSpecOf(updated.object)).not.toHaveProperty('hostPID');
    expect(containerOf(updated.object)).not.toHaveProperty('tty');
    const patched = await core.patch(
      rs('zeros'),
      { type: 'merge', body: { metadata: { annotations: {} }, spec: { minReadySeconds: 0, template: { spec: { hostIPC: false } } } } },
      {},
      admin,
    );
    expect(patched.object.spec).not.toHaveProperty('minReadySeconds');
    expect(podSpecOf(patched.object)).not.toHaveProperty('hostIPC');
    expect(patched.object.metadata).not.toHaveProperty('annotations');
    // Unchanged by either: the write stored the same content.
    expect(patched.object.metadata?.generation).toBe(current.metadata?.generation);
  });

  it('the generation counts changes of the spec as Go compares them: key order and left-out zeros are no change', async () => {
    const current = await core.get(rs('zeros'), {}, admin);
    const reversed = Object.fromEntries(Object.entries(JSON.parse(JSON.stringify(current.spec)) as Record<string, unknown>).reverse());
    const updated = await core.update(rs('zeros'), { ...current, spec: { ...reversed, minReadySeconds: 0 } }, {}, admin);
    expect(updated.object.metadata?.generation).toBe(current.metadata?.generation);
    // Server-side apply of a configuration holding zeros, twice: the second finds nothing to change.
    const config = { ...body('applied', { stdin: false }), metadata: { name: 'applied', namespace: 'default' } };
    const apply = () => core.patch(rs('applied'), { type: 'apply', body: config }, { fieldManager: 'tester' }, admin);
    const first = await apply();
    const second = await apply();
    expect(second.object.metadata?.generation).toBe(1);
    expect(second.object.metadata?.resourceVersion).toBe(first.object.metadata?.resourceVersion);
    expect(second.object.spec).not.toHaveProperty('minReadySeconds');
  });

  it("an in-process update built from frozen objects (the watch cache's) leaves them as they are and stores what Go would", async () => {
    const current = await core.get(rs('zeros'), {}, admin);
    const frozenSpec = Object.freeze({ ...(current.spec as object), minReadySeconds: 0 });
    const updated = await core.update(rs('zeros'), { ...current, metadata: { ...current.metadata, annotations: {} }, spec: frozenSpec }, {}, admin);
    expect(updated.object.metadata).not.toHaveProperty('annotations');
    // The core walks its own copy of the caller's object: the frozen parts keep their zeros, the stored object leaves them out.
    expect(frozenSpec).toHaveProperty('minReadySeconds', 0);
    expect(updated.object.spec).not.toHaveProperty('minReadySeconds');
  });
});
