/**
 * apiregistration/v1 APIService over a real core (embedded store), under both naming profiles:
 * upstream's validation messages, the port default, a local APIService Available from its
 * create, the status sub-strategy, and kube-aggregator's table columns.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext, type ResourceTarget } from '../../../src/core';
import { builtinResources } from '../../../src/core/resources';
import { buildTable } from '../../../src/core/table';
import type { APIService } from '../../../src/core/resources/apiservices';
import { createStore } from '../../../src/store';
import { ManualClock } from '../../../src/clock';
import { createNaming, VENDORS } from '../../../src/naming';
import { statusOf as refusal } from '../../support/status';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const NOW = Date.parse('2024-05-01T10:00:00Z');

describe.each(VENDORS)('APIService (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  const group = naming.groups.apiregistration;
  const target = (name?: string, subresource?: string): ResourceTarget => ({
    group,
    version: 'v1',
    resource: 'apiservices',
    ...(name ? { name } : {}),
    ...(subresource ? { subresource } : {}),
  });
  const apiService = (name: string, spec: Record<string, unknown>): ApiObject => ({ apiVersion: `${group}/v1`, kind: 'APIService', metadata: { name }, spec });
  const remote = (extra: Record<string, unknown> = {}) => ({
    group: 'wardle.example.com',
    version: 'v1alpha1',
    service: { namespace: 'wardle', name: 'api' },
    groupPriorityMinimum: 1000,
    versionPriority: 15,
    ...extra,
  });
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-apiservice-'));
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, clock: new ManualClock(NOW), compactionIntervalMs: 0 });
    await core.ready();
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is served in the apiregistration group of the profile, cluster-scoped, in api-extensions', () => {
    const def = builtinResources(naming).find((d) => d.resource === 'apiservices')!;
    expect(def).toMatchObject({ group, version: 'v1', kind: 'APIService', namespaced: false, categories: ['api-extensions'] });
  });

  it('refuses with upstream messages: the name, the group, the version, the priorities', async () => {
    const err = await refusal(core.create(target(), apiService('v1.wrong.example.com', remote({ groupPriorityMinimum: 0, versionPriority: 1001 })), {}, admin));
    expect(err.status.code).toBe(422);
    expect(err.status.details?.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: 'Invalid value: "v1.wrong.example.com": must be `spec.version+"."+spec.group`: "v1alpha1.wardle.example.com"',
      },
      { reason: 'FieldValueInvalid', field: 'spec.groupPriorityMinimum', message: 'Invalid value: 0: must be positive and less than 20000' },
      { reason: 'FieldValueInvalid', field: 'spec.versionPriority', message: 'Invalid value: 1001: must be positive and less than 1000' },
    ]);
    expect(err.status.message).toBe(
      `APIService.${group} "v1.wrong.example.com" is invalid: [metadata.name: Invalid value: "v1.wrong.example.com": must be \`spec.version+"."+spec.group\`: "v1alpha1.wardle.example.com", spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000, spec.versionPriority: Invalid value: 1001: must be positive and less than 1000]`,
    );

    const noGroup = await refusal(core.create(target(), apiService('v2.', { version: 'v2', groupPriorityMinimum: 1, versionPriority: 1 }), {}, admin));
    expect(noGroup.status.details?.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.group', message: 'Required value: only v1 may have an empty group and it better be legacy kube' },
    ]);
    const badVersion = await refusal(
      core.create(target(), apiService('V1.x.io', { group: 'x.io', version: 'V1', groupPriorityMinimum: 1, versionPriority: 1 }), {}, admin),
    );
    expect(badVersion.status.details?.causes?.[0]).toMatchObject({ field: 'spec.version' });
    expect(badVersion.status.details?.causes?.[0]?.message).toContain('a DNS-1035 label must consist of lower case alphanumeric characters');
  });

  it('refuses a service without a name or namespace, and a caBundle beside insecureSkipTLSVerify or on a local one', async () => {
    const missing = await refusal(core.create(target(), apiService('v1alpha1.wardle.example.com', remote({ service: {} })), {}, admin));
    expect(missing.status.details?.causes).toEqual([
      { reason: 'FieldValueRequired', field: 'spec.service.namespace', message: 'Required value' },
      { reason: 'FieldValueRequired', field: 'spec.service.name', message: 'Required value' },
    ]);
    const ca = Buffer.from('not really a bundle').toString('base64');
    const both = await refusal(
      core.create(target(), apiService('v1alpha1.wardle.example.com', remote({ caBundle: ca, insecureSkipTLSVerify: true })), {}, admin),
    );
    expect(both.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.insecureSkipTLSVerify', message: 'Invalid value: true: may not be true if caBundle is present' },
    ]);
    const local = await refusal(
      core.create(target(), apiService('v1alpha1.wardle.example.com', remote({ service: undefined, caBundle: ca, insecureSkipTLSVerify: true })), {}, admin),
    );
    expect(local.status.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', field: 'spec.caBundle', message: 'Invalid value: "19 bytes": local APIServices may not have a caBundle' },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.insecureSkipTLSVerify',
        message: 'Invalid value: true: local APIServices may not have insecureSkipTLSVerify',
      },
    ]);
  });

  it('a local APIService is Available from its create; a remote one has no condition and its port defaults to 443', async () => {
    const local = (
      await core.create(
        target(),
        apiService('v1.local.example.com', { group: 'local.example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 1 }),
        {},
        admin,
      )
    ).object as APIService;
    expect(local.status?.conditions).toEqual([
      { type: 'Available', status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'Local', message: 'Local APIServices are always available' },
    ]);
    const created = (
      await core.create(
        target(),
        { ...apiService('v1alpha1.wardle.example.com', remote()), status: { conditions: [{ type: 'Available', status: 'True' }] } },
        {},
        admin,
      )
    ).object as APIService;
    expect(created.spec?.service).toEqual({ namespace: 'wardle', name: 'api', port: 443 });
    expect(created.status).toEqual({});
  });

  it('/status changes the conditions only; an update of the object keeps them; a bad status is refused', async () => {
    const current = (await core.get(target('v1alpha1.wardle.example.com'), {}, admin)) as APIService;
    const condition = { type: 'Available', status: 'False', lastTransitionTime: '2024-05-01T10:00:00Z', reason: 'FailedDiscoveryCheck', message: 'failing' };
    const written = (
      await core.update(
        target('v1alpha1.wardle.example.com', 'status'),
        {
          ...current,
          metadata: { ...current.metadata, labels: { a: 'b' } },
          spec: { ...current.spec, versionPriority: 99 },
          status: { conditions: [condition] },
        },
        {},
        admin,
      )
    ).object as APIService;
    expect(written.status?.conditions).toEqual([condition]);
    expect(written.spec?.versionPriority).toBe(15);
    expect(written.metadata?.labels).toBeUndefined();

    const updated = (
      await core.update(target('v1alpha1.wardle.example.com'), { ...written, spec: { ...written.spec, versionPriority: 20 }, status: {} }, {}, admin)
    ).object as APIService;
    expect(updated.spec?.versionPriority).toBe(20);
    expect(updated.status?.conditions).toEqual([condition]);

    const bad = await refusal(
      core.update(target('v1alpha1.wardle.example.com', 'status'), { ...updated, status: { conditions: [{ type: 'Available', status: 'Maybe' }] } }, {}, admin),
    );
    expect(bad.status.details?.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        field: 'status.conditions[0].status',
        message: 'Unsupported value: "Maybe": supported values: "True", "False", "Unknown"',
      },
    ]);
  });

  it('tables as kube-aggregator: NAME SERVICE AVAILABLE AGE, Local, and the reason of a condition that is not True', async () => {
    const def = builtinResources(naming).find((d) => d.resource === 'apiservices')!;
    const list = await core.list(target(), {}, admin);
    const table = buildTable(list, def.table, {
      metaApiVersion: `${naming.groups.meta}/v1`,
      apiVersion: `${group}/v1`,
      kind: 'APIService',
      ctx: { now: NOW + 90_000 },
    });
    expect(table.columnDefinitions?.map((c) => c.name)).toEqual(['Name', 'Service', 'Available', 'Age']);
    expect((table.rows ?? []).map((r) => r.cells)).toEqual([
      ['v1.local.example.com', 'Local', 'True', '90s'],
      ['v1alpha1.wardle.example.com', 'wardle/api', 'False (FailedDiscoveryCheck)', '90s'],
    ]);
  });
});
