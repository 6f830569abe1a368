/**
 * The ValidatingAdmissionPolicy status controller over a real core: expressions are
 * type-checked against the served schema of the kinds the rules name, and the warnings land in
 * the policy's status in cel-go's words with the caret line; a fixed policy clears them.
 */
import { systemClock } from '../../src/clock';
import { AdmissionPolicyStatusController } from '../../src/controllers';
import type { ApiObject } from '../../src/core';
import { ctx, eventually, openCore, type TestCore } from './support';

const AR = 'admissionregistration.k8s.io';
const policies = (name?: string) => ({ group: AR, version: 'v1', resource: 'validatingadmissionpolicies', ...(name ? { name } : {}) });

let t: TestCore;
let controller: AdmissionPolicyStatusController;

beforeAll(async () => {
  t = await openCore();
  controller = new AdmissionPolicyStatusController({ core: t.core, naming: t.core.naming, resources: t.core.resources, clock: systemClock, user: ctx.user });
  controller.start();
});

afterAll(async () => {
  controller.stop();
  await t.close();
});

async function statusOf(name: string, generation: number): Promise<Record<string, any>> {
  return eventually(
    async () => {
      const status = (await t.core.get(policies(name), {}, ctx)).status as Record<string, any> | undefined;
      return status?.observedGeneration === generation && status;
    },
    { what: `${name}'s status at generation ${generation}` },
  );
}

test('undefined fields of the matched kinds are warned about, per expression, until fixed', async () => {
  const policy: ApiObject = {
    apiVersion: `${AR}/v1`,
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'replicas' },
    spec: {
      matchConstraints: { resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['replicasets'] }] },
      validations: [
        { expression: 'object.spec.replicass > 1' },
        { expression: "object.spec.replicas <= 5 && object.metadata.labels.all(k, k != 'x') && object.kind == 'ReplicaSet'" },
        { expression: 'object.spec.template.spec.containers.all(c, c.image != "")', messageExpression: "'bad: ' + object.spec.selector.matchLabelz.app" },
      ],
    },
  };
  const { object } = await t.core.create(policies(), policy, {}, ctx);
  const status = await statusOf('replicas', object.metadata!.generation!);
  expect(status.typeChecking.expressionWarnings).toEqual([
    {
      fieldRef: 'spec.validations[0].expression',
      warning: "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^",
    },
    {
      fieldRef: 'spec.validations[2].messageExpression',
      warning:
        "apps/v1, Kind=ReplicaSet: ERROR: <input>:1:31: undefined field 'matchLabelz'\n | 'bad: ' + object.spec.selector.matchLabelz.app\n | ..............................^",
    },
  ]);

  const current = structuredClone(await t.core.get(policies('replicas'), {}, ctx));
  const spec = current.spec as Record<string, any>;
  spec.validations = [{ expression: 'object.spec.replicas > 1' }];
  const { object: fixed } = await t.core.update(policies('replicas'), current, {}, ctx);
  expect(fixed.metadata!.generation).toBe(2);
  expect((await statusOf('replicas', 2)).typeChecking).toEqual({});
});
