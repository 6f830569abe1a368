/**
 * ABAC decisions over a fixed policy file, in both naming profiles. The expected decisions are
 * written by hand from upstream's rules (pkg/auth/authorizer/abac and the v0/v1beta1
 * conversions), not computed by the code: the first matching policy allows, none is no opinion.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { abacAuthorizer, loadAbacPolicy, readAbacPolicyFile, type AbacPolicy, type AuthorizationAttributes, type Decision } from '../../src/authz';
import { createNaming, VENDORS, type Vendor } from '../../src/naming';

const GROUPS: Record<Vendor, string> = { kubernetes: 'abac.authorization.kubernetes.io', platform: 'abac.authorization.platform.io' };

const v1 = (group: string, spec: Record<string, unknown>) => JSON.stringify({ apiVersion: `${group}/v1beta1`, kind: 'Policy', spec });

/** The policy file under test, its apiVersion in `group`. */
function policyFile(group: string): string {
  return [
    '# ABAC policy: one JSON object per line',
    '',
    '   # an indented comment',
    v1(group, { user: 'alice', namespace: '*', resource: '*', apiGroup: '*' }),
    // apiGroup left out: the core group only
    v1(group, { user: 'bob', namespace: 'projectCaribou', resource: 'pods', readonly: true }),
    v1(group, { group: 'readers', namespace: '*', resource: '*', apiGroup: '*', readonly: true }),
    // user and group both given: both must match; namespace '' is cluster-scoped requests only
    v1(group, { user: 'carol', group: 'ops', namespace: '', resource: 'nodes', apiGroup: '' }),
    v1(group, { user: 'dave', namespace: 'team-a', resource: 'deployments', apiGroup: 'apps' }),
    '',
    // user '*' means every authenticated user
    v1(group, { user: '*', nonResourcePath: '/version' }),
    v1(group, { user: 'erin', nonResourcePath: '/logs/*' }),
    v1(group, { user: 'frank', nonResourcePath: '*', readonly: true }),
    v1(group, { group: 'system:unauthenticated', nonResourcePath: '/healthz', readonly: true }),
    // v0 (unversioned) lines
    '{"user":"henry"}',
    '{"user":"ivan","namespace":"team-b","readonly":true}',
    '{"group":"v0group","resource":"events"}',
    '{"kind":"Policy","user":"jack","resource":"configmaps","namespace":"team-c"}',
    '{"resource":"namespaces","readonly":true}',
    '',
  ].join('\n');
}

const AUTH = ['system:authenticated'];
const ANON = 'system:anonymous';
const UNAUTH = ['system:unauthenticated'];

type Expect = 'allow' | 'noOpinion';
/** A resource request: user, groups, verb, API group, resource, subresource, namespace → decision. */
type ResourceCase = [
  user: string,
  groups: string[],
  verb: string,
  apiGroup: string,
  resource: string,
  subresource: string,
  namespace: string,
  expected: Expect,
];
/** A non-resource request: user, groups, verb, path → decision. */
type PathCase = [user: string, groups: string[], verb: string, path: string, expected: Expect];

const resourceCases: ResourceCase[] = [
  // alice: everything, in every namespace and at the cluster scope
  ['alice', AUTH, 'create', 'apps', 'deployments', '', 'team-x', 'allow'],
  ['alice', AUTH, 'delete', '', 'nodes', '', '', 'allow'],
  // bob: read pods (core group) in projectCaribou
  ['bob', AUTH, 'get', '', 'pods', '', 'projectCaribou', 'allow'],
  ['bob', AUTH, 'list', '', 'pods', '', 'projectCaribou', 'allow'],
  ['bob', AUTH, 'watch', '', 'pods', '', 'projectCaribou', 'allow'],
  ['bob', [], 'get', '', 'pods', '', 'projectCaribou', 'allow'],
  ['bob', AUTH, 'create', '', 'pods', '', 'projectCaribou', 'noOpinion'],
  ['bob', AUTH, 'patch', '', 'pods', '', 'projectCaribou', 'noOpinion'],
  ['bob', AUTH, 'get', '', 'pods', '', 'other', 'noOpinion'],
  ['bob', AUTH, 'list', '', 'pods', '', '', 'noOpinion'],
  ['bob', AUTH, 'get', 'apps', 'pods', '', 'projectCaribou', 'noOpinion'],
  ['bob', AUTH, 'get', '', 'services', '', 'projectCaribou', 'noOpinion'],
  // subresources are not matched: pods covers pods/log
  ['bob', AUTH, 'get', '', 'pods', 'log', 'projectCaribou', 'allow'],
  // group readers: read anything anywhere
  ['zed', ['readers'], 'get', 'apps', 'deployments', '', 'team-a', 'allow'],
  ['zed', ['readers'], 'list', '', 'secrets', '', '', 'allow'],
  ['zed', ['readers'], 'update', 'apps', 'deployments', '', 'team-a', 'noOpinion'],
  ['zed', ['writers'], 'get', 'apps', 'deployments', '', 'team-a', 'noOpinion'],
  // carol in ops: nodes, cluster scope, core group
  ['carol', ['ops'], 'get', '', 'nodes', '', '', 'allow'],
  ['carol', ['ops'], 'delete', '', 'nodes', '', '', 'allow'],
  ['carol', [], 'get', '', 'nodes', '', '', 'noOpinion'],
  ['mallory', ['ops'], 'get', '', 'nodes', '', '', 'noOpinion'],
  ['carol', ['ops'], 'get', '', 'nodes', '', 'team-a', 'noOpinion'],
  ['carol', ['ops'], 'get', 'apps', 'nodes', '', '', 'noOpinion'],
  // dave: apps deployments in team-a, every verb
  ['dave', AUTH, 'patch', 'apps', 'deployments', '', 'team-a', 'allow'],
  ['dave', AUTH, 'update', 'apps', 'deployments', 'scale', 'team-a', 'allow'],
  ['dave', AUTH, 'get', 'extensions', 'deployments', '', 'team-a', 'noOpinion'],
  ['dave', AUTH, 'get', 'apps', 'replicasets', '', 'team-a', 'noOpinion'],
  ['dave', AUTH, 'get', 'apps', 'deployments', '', 'team-b', 'noOpinion'],
  // erin and frank have only non-resource policies
  ['erin', [], 'get', '', 'logs', '', 'default', 'noOpinion'],
  ['frank', [], 'get', '', 'pods', '', 'default', 'noOpinion'],
  // v0 {"user":"henry"}: every resource, namespace and API group
  ['henry', [], 'delete', 'apps', 'deployments', '', 'team-q', 'allow'],
  ['henry', [], 'create', '', 'namespaces', '', '', 'allow'],
  // v0 ivan: readonly in team-b, any API group and resource
  ['ivan', [], 'get', 'batch', 'jobs', '', 'team-b', 'allow'],
  ['ivan', [], 'create', '', 'pods', '', 'team-b', 'noOpinion'],
  ['ivan', [], 'get', '', 'pods', '', 'team-c', 'noOpinion'],
  ['ivan', [], 'get', '', 'nodes', '', '', 'noOpinion'],
  // v0 group v0group: events in any namespace and API group
  ['kim', ['v0group'], 'create', 'events.k8s.io', 'events', '', 'team-z', 'allow'],
  ['kim', ['v0group'], 'delete', '', 'events', '', '', 'allow'],
  ['kim', ['v0group'], 'get', '', 'pods', '', 'team-z', 'noOpinion'],
  // v0 with kind Policy and no apiVersion
  ['jack', [], 'update', '', 'configmaps', '', 'team-c', 'allow'],
  ['jack', [], 'update', '', 'configmaps', '', 'team-d', 'noOpinion'],
  // v0 without user or group: every authenticated user (and only them), read-only
  ['lee', AUTH, 'get', '', 'namespaces', '', '', 'allow'],
  ['lee', AUTH, 'list', 'anything.example.com', 'namespaces', '', 'ns1', 'allow'],
  ['lee', AUTH, 'delete', '', 'namespaces', '', '', 'noOpinion'],
  ['lee', [], 'get', '', 'namespaces', '', '', 'noOpinion'],
  [ANON, UNAUTH, 'get', '', 'namespaces', '', '', 'noOpinion'],
];

const pathCases: PathCase[] = [
  // user '*' on /version: every authenticated user, every verb
  ['ursula', AUTH, 'get', '/version', 'allow'],
  ['ursula', AUTH, 'post', '/version', 'allow'],
  ['ursula', [], 'get', '/version', 'noOpinion'],
  [ANON, UNAUTH, 'get', '/version', 'noOpinion'],
  ['ursula', AUTH, 'get', '/version/extra', 'noOpinion'],
  // the unauthenticated group, read-only, exact /healthz
  [ANON, UNAUTH, 'get', '/healthz', 'allow'],
  [ANON, UNAUTH, 'post', '/healthz', 'noOpinion'],
  [ANON, UNAUTH, 'get', '/healthz/ready', 'noOpinion'],
  // erin: /logs/* is a prefix
  ['erin', [], 'get', '/logs/kube.log', 'allow'],
  ['erin', [], 'delete', '/logs/a/b', 'allow'],
  ['erin', [], 'get', '/logs/', 'allow'],
  ['erin', [], 'get', '/logs', 'noOpinion'],
  ['erin', [], 'get', '/logsx', 'noOpinion'],
  // frank: every path, read-only
  ['frank', [], 'get', '/anything/at/all', 'allow'],
  ['frank', [], 'get', '/', 'allow'],
  ['frank', [], 'delete', '/apis', 'noOpinion'],
  // resource policies never match non-resource paths
  ['alice', AUTH, 'get', '/healthz', 'noOpinion'],
  ['bob', AUTH, 'get', '/api', 'noOpinion'],
  ['alice', AUTH, 'get', '/version', 'allow'],
  // v0: no namespace and no resource also allows every non-resource path; otherwise none
  ['henry', [], 'post', '/some/path', 'allow'],
  ['ivan', AUTH, 'get', '/api', 'noOpinion'],
  ['kim', ['v0group'], 'get', '/api', 'noOpinion'],
  ['lee', AUTH, 'get', '/api', 'noOpinion'],
];

function resourceRequest([user, groups, verb, apiGroup, resource, subresource, namespace]: ResourceCase): AuthorizationAttributes {
  return { user: { username: user, groups }, verb, isResourceRequest: true, path: '', namespace, apiGroup, apiVersion: 'v1', resource, subresource, name: '' };
}

function pathRequest([user, groups, verb, p]: PathCase): AuthorizationAttributes {
  return {
    user: { username: user, groups },
    verb,
    isResourceRequest: false,
    path: p,
    namespace: '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

const decide = (policies: AbacPolicy[], a: AuthorizationAttributes) => abacAuthorizer(policies).authorize(a) as Decision;

describe.each(VENDORS)('ABAC decisions, %s profile', (vendor) => {
  const policies = loadAbacPolicy(policyFile(GROUPS[vendor]), '/etc/abac.jsonl', createNaming(vendor));

  it('loads every policy line and skips comments and blank lines', () => {
    expect(policies).toHaveLength(14);
  });

  it.each(resourceCases)('%s %j %s %s/%s (sub %s) in %j → %s', (...c) => {
    expect(decide(policies, resourceRequest(c)).decision).toBe(c[7]);
  });

  it.each(pathCases)('%s %j %s %s → %s', (...c) => {
    expect(decide(policies, pathRequest(c)).decision).toBe(c[4]);
  });

  it('has no opinion, with upstream reason, when nothing matches', () => {
    expect(decide(policies, pathRequest(['nobody', [], 'get', '/api', 'noOpinion']))).toEqual({ decision: 'noOpinion', reason: 'No policy matched.' });
  });
});

describe('ABAC conversions', () => {
  const naming = createNaming('kubernetes');
  const G = GROUPS.kubernetes;

  it("v1beta1 '*' as user or group becomes every authenticated user, dropping the other field", () => {
    const policies = loadAbacPolicy(
      [v1(G, { user: 'gina', group: '*', namespace: '*', resource: 'secrets' }), v1(G, { user: '*', group: 'admins', nonResourcePath: '/metrics' })].join('\n'),
      'f',
      naming,
    );
    // Not only gina: any authenticated user reads and writes core secrets.
    expect(decide(policies, resourceRequest(['someone', AUTH, 'delete', '', 'secrets', '', 'ns', 'allow'])).decision).toBe('allow');
    expect(decide(policies, resourceRequest(['gina', [], 'get', '', 'secrets', '', 'ns', 'noOpinion'])).decision).toBe('noOpinion');
    // Not only admins: any authenticated user.
    expect(decide(policies, pathRequest(['someone', AUTH, 'get', '/metrics', 'allow'])).decision).toBe('allow');
    expect(decide(policies, pathRequest([ANON, UNAUTH, 'get', '/metrics', 'noOpinion'])).decision).toBe('noOpinion');
  });

  it('v0 lines convert as upstream does', () => {
    const text = [
      '{"user":"a"}',
      '{"user":"*","group":"g","namespace":"n"}',
      '{"group":"g","resource":"pods","readonly":true}',
      `{"apiVersion":"${G}/v0","kind":"Policy","user":"b","namespace":"n","resource":"r"}`,
    ].join('\n');
    expect(loadAbacPolicy(text, 'f', naming)).toEqual([
      { user: 'a', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' },
      { user: '', group: 'system:authenticated', readonly: false, apiGroup: '*', resource: '*', namespace: 'n', nonResourcePath: '' },
      { user: '', group: 'g', readonly: true, apiGroup: '*', resource: 'pods', namespace: '*', nonResourcePath: '' },
      { user: 'b', group: '', readonly: false, apiGroup: '*', resource: 'r', namespace: 'n', nonResourcePath: '' },
    ]);
  });

  it('a v1beta1 policy with neither user nor group matches no one', () => {
    const policies = loadAbacPolicy(v1(G, { namespace: '*', resource: '*', apiGroup: '*', nonResourcePath: '*' }), 'f', naming);
    expect(decide(policies, resourceRequest(['u', AUTH, 'get', '', 'pods', '', 'ns', 'noOpinion'])).decision).toBe('noOpinion');
    expect(decide(policies, pathRequest(['u', AUTH, 'get', '/api', 'noOpinion'])).decision).toBe('noOpinion');
  });

  it('ignores unknown fields, reads null as empty, and accepts CRLF line endings', () => {
    const text = `${JSON.stringify({ apiVersion: `${G}/v1beta1`, kind: 'Policy', extra: 1, spec: { user: 'u', group: null, nonResourcePath: '/x', other: true } })}\r\n# c\r\n{"user":"v"}\r\n`;
    expect(loadAbacPolicy(text, 'f', naming)).toEqual([
      { user: 'u', group: '', readonly: false, apiGroup: '', resource: '', namespace: '', nonResourcePath: '/x' },
      { user: 'v', group: '', readonly: false, apiGroup: '*', resource: '*', namespace: '*', nonResourcePath: '*' },
    ]);
  });

  it('an empty file has no policies and no opinion', () => {
    const policies = loadAbacPolicy('\n# nothing\n', 'f', naming);
    expect(policies).toEqual([]);
    expect(decide(policies, pathRequest(['alice', AUTH, 'get', '/', 'noOpinion']))).toEqual({ decision: 'noOpinion', reason: 'No policy matched.' });
  });
});

describe('ABAC policy file errors name the file and line', () => {
  const naming = createNaming('kubernetes');
  const G = GROUPS.kubernetes;
  const good = v1(G, { user: 'a', nonResourcePath: '*' });
  const cases: Array<[what: string, line: string, detail: RegExp]> = [
    ['not JSON', '{"user": "a"', /not valid JSON/],
    ['not an object', '["user"]', /expected a JSON object/],
    [
      'a wrong apiVersion',
      JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1', kind: 'Policy', spec: { user: 'a' } }),
      /no kind "Policy" is registered for version "abac.authorization.kubernetes.io\/v1"/,
    ],
    [
      'the API-group domain instead of upstream’s',
      JSON.stringify({ apiVersion: 'abac.authorization.k8s.io/v1beta1', kind: 'Policy', spec: { user: 'a' } }),
      /is registered for version/,
    ],
    ['an unknown kind', JSON.stringify({ apiVersion: `${G}/v1beta1`, kind: 'Rule', spec: { user: 'a' } }), /no kind "Rule"/],
    ['a v1beta1 line without kind', JSON.stringify({ apiVersion: `${G}/v1beta1`, spec: { user: 'a' } }), /no kind ""/],
    ['an unknown kind without apiVersion', '{"kind":"Rule","user":"a"}', /no kind "Rule"/],
    ['a field of the wrong type', JSON.stringify({ apiVersion: `${G}/v1beta1`, kind: 'Policy', spec: { user: 5 } }), /user: expected a string/],
    ['readonly not a boolean', '{"user":"a","readonly":"true"}', /readonly: expected a boolean/],
    ['spec not an object', JSON.stringify({ apiVersion: `${G}/v1beta1`, kind: 'Policy', spec: 'x' }), /spec: expected an object/],
  ];

  it.each(cases)('rejects %s', (_what, line, detail) => {
    const text = ['# header', good, line, good].join('\n');
    let error: Error | undefined;
    try {
      loadAbacPolicy(text, '/etc/abac.jsonl', naming);
    } catch (err) {
      error = err as Error;
    }
    expect(error?.message).toContain(`error reading policy file /etc/abac.jsonl, line 3: ${line}: `);
    expect(error?.message).toMatch(detail);
  });

  it('counts comment and blank lines in the line number', () => {
    expect(() => loadAbacPolicy(['', '# c', good, '', 'nope'].join('\n'), 'p.jsonl', naming)).toThrow(/^error reading policy file p\.jsonl, line 5: nope: /);
  });

  it("each profile accepts only its own group's apiVersion", () => {
    const platformLine = v1(GROUPS.platform, { user: 'a', nonResourcePath: '*' });
    expect(() => loadAbacPolicy(platformLine, 'f', naming)).toThrow(/line 1: .*abac\.authorization\.platform\.io\/v1beta1/);
    expect(() => loadAbacPolicy(good, 'f', createNaming('platform'))).toThrow(/line 1: .*abac\.authorization\.kubernetes\.io\/v1beta1/);
    expect(loadAbacPolicy(platformLine, 'f', createNaming('platform'))).toHaveLength(1);
  });
});

describe('readAbacPolicyFile', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-abac-'));
  });
  afterAll(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('reads and loads a policy file', async () => {
    const file = path.join(dir, 'policy.jsonl');
    await fs.writeFile(file, policyFile(GROUPS.kubernetes));
    expect(readAbacPolicyFile(file, createNaming('kubernetes'))).toHaveLength(14);
  });

  it('reports a file that cannot be read', () => {
    const file = path.join(dir, 'missing.jsonl');
    expect(() => readAbacPolicyFile(file, createNaming('kubernetes'))).toThrow(`error reading policy file ${file}: `);
  });

  it('reports the line of a bad policy with the file path', async () => {
    const file = path.join(dir, 'bad.jsonl');
    await fs.writeFile(file, '{"user":"a"}\n{oops}\n');
    expect(() => readAbacPolicyFile(file, createNaming('kubernetes'))).toThrow(`error reading policy file ${file}, line 2: {oops}: not valid JSON`);
  });
});
