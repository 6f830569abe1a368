/**
 * Upstream's wire fixtures through the running server (issue 6 "Done when"): each served kind's
 * `.pb` is POSTed as protobuf and read back as JSON, YAML and protobuf, which must agree with
 * each other and with the fixture object apart from what the server sets.
 *
 * The fixtures fill every field with placeholder values (`nameValue`, `operationValue`) that
 * upstream's validation refuses as well, so each is first made valid with the fewest changes:
 * the `.pb` is decoded with protobufjs (not the server's codec), the listed fields are replaced
 * or dropped, and it is re-encoded; the same changes are applied to the `.json` to get the
 * expected object.
 */
import https from 'node:https';
import protobuf from 'protobufjs';
import { protobufjsRoot } from '../../src/codecs/protobuf/protobufjs-root';
import { createProtobufCodec } from '../../src/codecs/protobuf';
import { createNaming } from '../../src/naming';
import { parseFixtureYaml, wireFixtures } from '../codecs/wire-fixtures';
import type { ClientTls } from '../gateway/support/https-client';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { API_ONLY } from '../gateway/support/server-process';

const PB = 'application/vnd.kubernetes.protobuf';
const RBAC = 'rbac.authorization.k8s.io';

type Change = [path: string, value: unknown];

const meta = (namespace: string | undefined): Change[] => [
  ['metadata.name', 'fixture-value'],
  ['metadata.generateName', undefined],
  ['metadata.namespace', namespace],
  ['metadata.managedFields', undefined],
  ['metadata.finalizers', ['example.com/finalizer']],
];
const container = (at: string, name: string): Change[] => [
  [`${at}.name`, name],
  [`${at}.terminationMessagePolicy`, 'File'],
  [`${at}.ports.0.name`, 'http'],
  [`${at}.ports.0.protocol`, 'TCP'],
  [`${at}.imagePullPolicy`, 'IfNotPresent'],
];
const podSpec = (at: string): Change[] => [
  [`${at}.volumes.0.name`, 'volume'],
  ...container(`${at}.containers.0`, 'main'),
  ...container(`${at}.initContainers.0`, 'init'),
  [`${at}.restartPolicy`, 'Always'],
  [`${at}.dnsPolicy`, 'ClusterFirst'],
  [`${at}.serviceAccountName`, 'service-account'],
  [`${at}.nodeName`, 'node-value'],
  [`${at}.hostname`, 'hostname'],
  [`${at}.subdomain`, 'subdomain'],
  [`${at}.schedulerName`, 'default-scheduler'],
  [`${at}.ephemeralContainers`, undefined],
];

/** The kinds Keelson serves: fixture name, collection path, the changes that make it valid, the message type. */
const KINDS: [fixture: string, path: string, changes: Change[], type: string][] = [
  ['core.v1.Namespace', '/api/v1/namespaces', [...meta(undefined), ['spec.finalizers', ['kubernetes']]], 'core.v1.Namespace'],
  ['core.v1.ConfigMap', '/api/v1/namespaces/fixtures/configmaps', meta('fixtures'), 'core.v1.ConfigMap'],
  ['core.v1.Secret', '/api/v1/namespaces/fixtures/secrets', meta('fixtures'), 'core.v1.Secret'],
  ['core.v1.ServiceAccount', '/api/v1/namespaces/fixtures/serviceaccounts', meta('fixtures'), 'core.v1.ServiceAccount'],
  ['core.v1.Pod', '/api/v1/namespaces/fixtures/pods', [...meta('fixtures'), ...podSpec('spec')], 'core.v1.Pod'],
  [
    'apps.v1.ReplicaSet',
    '/apis/apps/v1/namespaces/fixtures/replicasets',
    [
      ...meta('fixtures'),
      ['spec.selector.matchExpressions', undefined],
      ['spec.template.metadata.labels', { matchLabelsKey: 'matchLabelsValue' }],
      ...podSpec('spec.template.spec'),
      ['spec.template.spec.activeDeadlineSeconds', undefined],
    ],
    'apps.v1.ReplicaSet',
  ],
  [`${RBAC}.v1.Role`, `/apis/${RBAC}/v1/namespaces/fixtures/roles`, [...meta('fixtures'), ['rules.0.nonResourceURLs', undefined]], 'rbac.v1.Role'],
  [
    `${RBAC}.v1.ClusterRole`,
    `/apis/${RBAC}/v1/clusterroles`,
    [...meta(undefined), ['rules.0.nonResourceURLs', undefined], ['aggregationRule', undefined]],
    'rbac.v1.ClusterRole',
  ],
  [
    `${RBAC}.v1.RoleBinding`,
    `/apis/${RBAC}/v1/namespaces/fixtures/rolebindings`,
    [
      ...meta('fixtures'),
      ['roleRef.apiGroup', RBAC],
      ['roleRef.kind', 'Role'],
      ['subjects.0.kind', 'Group'],
      ['subjects.0.apiGroup', RBAC],
      ['subjects.0.namespace', undefined],
    ],
    'rbac.v1.RoleBinding',
  ],
  [
    `${RBAC}.v1.ClusterRoleBinding`,
    `/apis/${RBAC}/v1/clusterrolebindings`,
    [
      ...meta(undefined),
      ['roleRef.apiGroup', RBAC],
      ['roleRef.kind', 'ClusterRole'],
      ['subjects.0.kind', 'Group'],
      ['subjects.0.apiGroup', RBAC],
      ['subjects.0.namespace', undefined],
    ],
    'rbac.v1.ClusterRoleBinding',
  ],
  [
    'events.k8s.io.v1.Event',
    '/apis/events.k8s.io/v1/namespaces/fixtures/events',
    [
      ...meta('fixtures'),
      ['series.count', 2],
      ['type', 'Normal'],
      ['deprecatedFirstTimestamp', undefined],
      ['deprecatedLastTimestamp', undefined],
      ['deprecatedCount', undefined],
      ['deprecatedSource', undefined],
      ['regarding.namespace', 'fixtures'],
      ['related.namespace', 'fixtures'],
    ],
    'events.v1.Event',
  ],
];

function change(target: Record<string, any>, changes: Change[]): void {
  for (const [path, value] of changes) {
    const parts = path.split('.');
    let at: any = target;
    for (const p of parts.slice(0, -1)) at = at?.[p];
    if (!at) continue;
    const last = parts[parts.length - 1]!;
    if (value === undefined) delete at[last];
    else at[last] = value;
  }
}

/** Upstream's defaulting and conversion on create, which the expected object goes through too. */
function serverFills(obj: Record<string, any>): void {
  const podSpecs = obj.kind === 'Pod' ? [obj.spec] : obj.kind === 'ReplicaSet' ? [obj.spec.template.spec] : [];
  for (const spec of podSpecs) {
    spec.serviceAccount = spec.serviceAccountName; // v1 mirrors the deprecated field
    if (obj.kind === 'Pod') {
      // Requests default to the limits (containers and init containers).
      for (const c of [...spec.containers, ...spec.initContainers]) c.resources.requests = { ...c.resources.limits, ...c.resources.requests };
    }
  }
  if (obj.kind === 'Namespace') obj.metadata.labels['kubernetes.io/metadata.name'] = obj.metadata.name;
  if (obj.kind === 'Secret') {
    for (const [k, v] of Object.entries(obj.stringData as Record<string, string>)) obj.data[k] = Buffer.from(v).toString('base64');
    delete obj.stringData;
  }
  if (obj.kind === 'Event') Object.assign(obj, { deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null, deprecatedSource: {} });
}

/** What the server sets or resets on create (system metadata; status of the types with a status split). */
function comparable(obj: Record<string, any>, kind: string): Record<string, any> {
  const out = JSON.parse(JSON.stringify(obj));
  for (const f of ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink', 'deletionTimestamp', 'deletionGracePeriodSeconds'])
    delete out.metadata?.[f];
  if (['Pod', 'ReplicaSet', 'Namespace'].includes(kind)) delete out.status;
  return out;
}

function request(
  url: string,
  tls: ClientTls,
  method: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, headers, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('upstream wire fixtures through the running server', () => {
  let server: ServerProcess;
  const root = protobufjsRoot();
  const envelopeRoot = protobuf.parse(
    'syntax = "proto2"; message TypeMeta { optional string apiVersion = 1; optional string kind = 2; } message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }',
  ).root;
  const Unknown = envelopeRoot.lookupType('Unknown');
  const fixtures = new Map(wireFixtures().map((f) => [f.name, f]));
  const serverCodec = createProtobufCodec(createNaming('kubernetes'));

  beforeAll(async () => {
    // The fixtures round-trip as sent: no admission plugin that fills in a pod.
    server = await startServerProcess([
      '--vendor',
      'kubernetes',
      ...API_ONLY,
      '--disable-admission-plugins',
      'ServiceAccount,Priority,DefaultTolerationSeconds',
    ]);
    const ns = await request(
      `${server.url}/api/v1/namespaces`,
      server.admin,
      'POST',
      { 'content-type': 'application/json' },
      Buffer.from('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fixtures"}}'),
    );
    expect(ns.status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(KINDS)('%s: POST .pb, GET as JSON, YAML and protobuf', async (name, path, changes, typeName) => {
    const fixture = fixtures.get(name)!;
    // protobufjs reads the fixture, the changes apply, protobufjs writes the new body.
    const envelope = Unknown.decode(fixture.pb.subarray(4)) as unknown as { raw: Uint8Array };
    const type = root.lookupType(typeName);
    const message = type.decode(envelope.raw) as unknown as Record<string, any>;
    change(message, changes);
    envelope.raw = type.encode(message).finish();
    const body = Buffer.concat([fixture.pb.subarray(0, 4), Buffer.from(Unknown.encode(envelope as never).finish())]);
    const expected = JSON.parse(fixture.json.toString('utf8'));
    change(expected, changes);
    serverFills(expected);

    const created = await request(`${server.url}${path}`, server.admin, 'POST', { 'content-type': PB, accept: 'application/json' }, body);
    expect({ status: created.status, body: created.status === 201 ? '' : created.body.toString() }).toEqual({ status: 201, body: '' });
    const objectPath = `${path}/fixture-value`;
    const asJson = await request(`${server.url}${objectPath}`, server.admin, 'GET', { accept: 'application/json' });
    const asYaml = await request(`${server.url}${objectPath}`, server.admin, 'GET', { accept: 'application/yaml' });
    const asPb = await request(`${server.url}${objectPath}`, server.admin, 'GET', { accept: PB });
    expect([asJson.type, asYaml.type, asPb.type]).toEqual(['application/json', 'application/yaml', PB]);

    const fromJson = JSON.parse(asJson.body.toString('utf8'));
    expect(parseFixtureYaml(asYaml.body)).toEqual(fromJson);
    expect(serverCodec.decode(asPb.body)).toEqual(fromJson);
    // protobufjs reads the served bytes to the same message the server stored.
    const served = type.toObject(type.decode((Unknown.decode(asPb.body.subarray(4)) as unknown as { raw: Uint8Array }).raw));
    expect(served.metadata.name).toBe('fixture-value');
    expect(comparable(fromJson, expected.kind)).toEqual(comparable(expected, expected.kind));
  });
});
