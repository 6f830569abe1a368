/**
 * flowcontrol FlowSchema and PriorityLevelConfiguration over a real core (embedded store):
 * upstream's defaults per version (v1's shares only when unspecified; v1beta3's zero and its
 * round-trip annotation), validation messages, and the mandatory objects' fixed specs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext, type ResourceTarget } from '../../../src/core';
import { builtinResources } from '../../../src/core/resources';
import { flowControlBootstrap } from '../../../src/core/resources/flowcontrol-bootstrap';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { statusOf as refusal } from '../../support/status';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const GROUP = 'flowcontrol.apiserver.k8s.io';
const target = (resource: string, version = 'v1', name?: string): ResourceTarget => ({ group: GROUP, version, resource, ...(name ? { name } : {}) });
const levels = (version = 'v1', name?: string) => target('prioritylevelconfigurations', version, name);
const schemas = (version = 'v1', name?: string) => target('flowschemas', version, name);
const everything = [
  {
    subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }],
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
  },
];
const level = (name: string, limited: Record<string, unknown>, version = 'v1', annotations?: Record<string, string>): ApiObject => ({
  apiVersion: `${GROUP}/${version}`,
  kind: 'PriorityLevelConfiguration',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} }, ...limited } },
});
const schema = (name: string, spec: Record<string, unknown>): ApiObject => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'FlowSchema',
  metadata: { name },
  spec: { priorityLevelConfiguration: { name: 'tenant' }, rules: everything, ...spec },
});
const causes = async (p: Promise<unknown>) => (await refusal(p)).status.details?.causes?.map((c) => `${c.field}: ${c.message}`);

describe('flowcontrol FlowSchema and PriorityLevelConfiguration', () => {
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-apf-'));
    const naming = createNaming('kubernetes');
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0, resources: builtinResources(naming) });
    await core.ready();
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('v1 defaults: shares 30 only when unspecified, an explicit 0 stays 0; lendable 0 and queuing 64/8/50', async () => {
    const unspecified = (await core.create(levels(), level('unspecified', {}), {}, admin)).object as ApiObject & { spec: { limited: Record<string, unknown> } };
    expect(unspecified.spec.limited).toEqual({
      nominalConcurrencyShares: 30,
      limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } },
      lendablePercent: 0,
    });
    const zero = (await core.create(levels(), level('jail', { nominalConcurrencyShares: 0 }), {}, admin)).object as ApiObject & {
      spec: { limited: Record<string, unknown> };
    };
    expect(zero.spec.limited.nominalConcurrencyShares).toBe(0);
    expect(zero.metadata?.annotations).toBeUndefined();
  });

  it('v1beta3: a zero becomes 30 without the round-trip annotation; v1 zeros read back through v1beta3 with it', async () => {
    const defaulted = (await core.create(levels('v1beta3'), level('beta-zero', { nominalConcurrencyShares: 0 }, 'v1beta3'), {}, admin)).object as ApiObject & {
      spec: { limited: Record<string, unknown> };
    };
    expect(defaulted.spec.limited.nominalConcurrencyShares).toBe(30);
    const key = `${GROUP.replace('.apiserver', '')}/v1beta3-preserve-zero-concurrency-shares`;
    await core.create(levels('v1beta3'), level('beta-kept', { nominalConcurrencyShares: 0 }, 'v1beta3', { [key]: '' }), {}, admin);
    const asV1 = (await core.get(levels('v1', 'beta-kept'), {}, admin)) as ApiObject & { spec: { limited: Record<string, unknown> } };
    expect(asV1.spec.limited.nominalConcurrencyShares).toBe(0);
    expect(asV1.metadata?.annotations).toBeUndefined();
    const jail = (await core.get(levels('v1beta3', 'jail'), {}, admin)) as ApiObject & { spec: { limited: Record<string, unknown> } };
    expect(jail.apiVersion).toBe(`${GROUP}/v1beta3`);
    expect(jail.spec.limited.nominalConcurrencyShares).toBe(0);
    expect(jail.metadata?.annotations).toEqual({ [key]: '' });
  });

  it('validates priority levels with upstream messages, the shuffle-sharding entropy check among them', async () => {
    expect(
      await causes(core.create(levels(), level('big-hand', { limitResponse: { type: 'Queue', queuing: { queues: 7, handSize: 8 } } }), {}, admin)),
    ).toEqual(['spec.limited.limitResponse.queuing.handSize: Invalid value: 8: should not be greater than queues (7)']);
    expect(
      await causes(core.create(levels(), level('entropy', { limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 10 } } }), {}, admin)),
    ).toEqual([
      'spec.limited.limitResponse.queuing.handSize: Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 should not be greater than 60',
    ]);
    expect(
      await causes(core.create(levels(), level('bad', { nominalConcurrencyShares: -1, lendablePercent: 101, borrowingLimitPercent: -1 }), {}, admin)),
    ).toEqual([
      'spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer',
      'spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive',
      'spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer',
    ]);
    const reject = { apiVersion: `${GROUP}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'exempt-ish' }, spec: { type: 'Exempt' } };
    expect(await causes(core.create(levels(), reject, {}, admin))).toEqual([
      "spec.type: Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'",
    ]);
    const noType = { apiVersion: `${GROUP}/v1`, kind: 'PriorityLevelConfiguration', metadata: { name: 'no-type' }, spec: { type: 'Sometimes' } };
    expect(await causes(core.create(levels(), noType, {}, admin))).toEqual([
      'spec.type: Unsupported value: "Sometimes": supported values: "Exempt", "Limited"',
    ]);
  });

  it('validates flow schemas with upstream messages and defaults matchingPrecedence to 1000', async () => {
    const created = (await core.create(schemas(), schema('tenant', {}), {}, admin)).object as ApiObject & { spec: Record<string, unknown> };
    expect(created.spec.matchingPrecedence).toBe(1000);
    expect(await causes(core.create(schemas(), schema('first', { matchingPrecedence: 1 }), {}, admin))).toEqual([
      "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
    ]);
    expect(await causes(core.create(schemas(), schema('late', { matchingPrecedence: 10001 }), {}, admin))).toEqual([
      'spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000',
    ]);
    const badRules = schema('bad-rules', {
      distinguisherMethod: { type: 'ByPod' },
      rules: [
        {
          subjects: [{ kind: 'User', group: { name: 'g' } }],
          resourceRules: [{ verbs: ['get', 'poke'], apiGroups: ['*', 'apps'], resources: [], namespaces: ['Not_A_Label'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['/healthz/*/x'] }],
        },
      ],
    });
    expect(await causes(core.create(schemas(), badRules, {}, admin))).toEqual([
      'spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:"ByPod"}: supported values: "ByNamespace", "ByUser"',
      "spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'",
      "spec.rules[0].subjects[0].group: Forbidden: group is forbidden when subject kind is not 'Group'",
      'spec.rules[0].resourceRules[0].verbs: Unsupported value: []string{"get", "poke"}: supported values: "create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"',
      'spec.rules[0].resourceRules[0].apiGroups: Invalid value: []string{"*", "apps"}: if \'*\' is present, must not specify other api groups',
      'spec.rules[0].resourceRules[0].resources: Required value: resource rules must supply at least one resource',
      expect.stringMatching(
        /^spec\.rules\[0\]\.resourceRules\[0\]\.namespaces\[0\]: Invalid value: "Not_A_Label": each member of this list must be '\*' or a DNS-1123 label; /,
      ),
      'spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: "/healthz/*/x": wildcard can only do suffix matching',
    ]);
  });

  it("keeps the mandatory objects' specs fixed, but lets the exempt level's exempt section change", async () => {
    const naming = createNaming('kubernetes');
    const bootstrap = flowControlBootstrap(naming);
    for (const pl of bootstrap.priorityLevels.mandatory) await core.create(levels(), structuredClone(pl), {}, admin);
    await core.create(schemas(), structuredClone(bootstrap.flowSchemas.mandatory[1]!), {}, admin);
    const catchAll = (await core.get(schemas('v1', 'catch-all'), {}, admin)) as ApiObject & { spec: Record<string, unknown> };
    const changed = await refusal(core.update(schemas('v1', 'catch-all'), { ...catchAll, spec: { ...catchAll.spec, matchingPrecedence: 9000 } }, {}, admin));
    expect(changed.status.details?.causes?.[0]).toMatchObject({
      field: 'spec',
      message: expect.stringMatching(/spec of 'catch-all' must equal the fixed value$/),
    });
    const exempt = (await core.get(levels('v1', 'exempt'), {}, admin)) as ApiObject & { spec: Record<string, unknown> };
    const tuned = (
      await core.update(
        levels('v1', 'exempt'),
        { ...exempt, spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 10, lendablePercent: 20 } } },
        {},
        admin,
      )
    ).object as ApiObject & {
      spec: Record<string, unknown>;
    };
    expect(tuned.spec.exempt).toEqual({ nominalConcurrencyShares: 10, lendablePercent: 20 });
    const limited = await refusal(
      core.update(
        levels('v1', 'exempt'),
        { ...tuned, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } },
        {},
        admin,
      ),
    );
    expect(limited.status.details?.causes?.map((c) => c.message)).toContainEqual(
      expect.stringMatching(/spec of 'exempt' except the 'spec.exempt' field must equal the fixed value$/),
    );
  });
});
