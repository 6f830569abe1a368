/**
 * The in-tree admission plugins over a real core (embedded store): the chain of upstream's
 * names and order from the flags' two lists, ServiceAccount, DefaultTolerationSeconds and
 * NodeRestriction. Expected values and messages are upstream's, written out by hand.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../../src/core';
import { type AdmissionPluginsError, defaultAdmissionPlugins, resolveAdmissionPlugins } from '../../../src/core/admission';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { at, refusal } from './support';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const node = (name: string): RequestContext => ({ user: { username: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated'] } });
const pod = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...metadata },
  spec: { containers: [{ name: 'c', image: 'i' }], ...spec },
});

describe('the chain from --enable-admission-plugins and --disable-admission-plugins', () => {
  test("the defaults are upstream 1.32's default-on plugins Keelson has, in upstream's order", () => {
    expect(defaultAdmissionPlugins()).toEqual([
      'NamespaceLifecycle',
      'ServiceAccount',
      'Priority',
      'DefaultTolerationSeconds',
      'CertificateApproval',
      'CertificateSigning',
      'CertificateSubjectRestriction',
      'MutatingAdmissionWebhook',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionWebhook',
    ]);
  });

  test("an enabled plugin takes its place in upstream's order, whatever the flag's order", () => {
    expect(resolveAdmissionPlugins(['ValidatingAdmissionWebhook', 'NodeRestriction'], ['ServiceAccount', 'MutatingAdmissionWebhook'])).toEqual([
      'NamespaceLifecycle',
      'NodeRestriction',
      'Priority',
      'DefaultTolerationSeconds',
      'CertificateApproval',
      'CertificateSigning',
      'CertificateSubjectRestriction',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionWebhook',
    ]);
  });

  test("unknown names and overlaps are upstream's start errors; a plugin for unserved types may be disabled, not enabled", () => {
    const errors = (enable: string[], disable: string[]) => {
      try {
        resolveAdmissionPlugins(enable, disable);
      } catch (err) {
        return (err as AdmissionPluginsError).errors;
      }
      return [];
    };
    expect(errors(['Nope'], [])).toEqual(['enable-admission-plugins plugin "Nope" is unknown']);
    expect(errors([], ['Nope'])).toEqual(['disable-admission-plugins plugin "Nope" is unknown']);
    expect(errors(['NodeRestriction', 'AlwaysDeny'], ['AlwaysDeny', 'NodeRestriction'])).toEqual([
      '[AlwaysDeny NodeRestriction] in enable-admission-plugins and disable-admission-plugins overlapped',
    ]);
    expect(errors(['LimitRanger'], [])[0]).toMatch(/^enable-admission-plugins plugin "LimitRanger" is not available/);
    expect(resolveAdmissionPlugins([], ['LimitRanger', 'PodSecurity', 'ResourceQuota'])).toEqual(defaultAdmissionPlugins());
  });
});

describe('plugins on a core', () => {
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-admission-'));
    core = createCore({
      store: createStore({ kind: 'embedded', dataDir: dir }),
      naming,
      compactionIntervalMs: 0,
      admissionPlugins: resolveAdmissionPlugins(['NodeRestriction']),
    });
    await core.ready();
    await core.create(at('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } }, {}, admin);
    await core.create(at('serviceaccounts', 'apps'), { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }, {}, admin);
    await core.create(
      at('serviceaccounts', 'apps'),
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' }, imagePullSecrets: [{ name: 'registry' }] },
      {},
      admin,
    );
    await core.create(
      at('serviceaccounts', 'apps'),
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'quiet' }, automountServiceAccountToken: false },
      {},
      admin,
    );
  });

  afterAll(async () => {
    await core.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  describe('ServiceAccount', () => {
    test('a pod runs as default, with the API credentials mounted read-only in every container', async () => {
      const { object } = await core.create(at('pods', 'apps'), pod('web', { initContainers: [{ name: 'init', image: 'i' }] }), {}, admin);
      const spec = object.spec as Record<string, any>;
      expect(spec.serviceAccountName).toBe('default');
      expect(spec.serviceAccount).toBe('default');
      expect(spec.volumes).toHaveLength(1);
      const volume = spec.volumes[0];
      expect(volume.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(volume.projected).toEqual({
        sources: [
          { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 420,
      });
      for (const c of [...spec.initContainers, ...spec.containers]) {
        expect(c.volumeMounts).toEqual([{ name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
      }
    });

    test("the account's pull secrets are copied to a pod that names none", async () => {
      const { object } = await core.create(at('pods', 'apps'), pod('build', { serviceAccountName: 'builder' }), {}, admin);
      expect((object.spec as any).imagePullSecrets).toEqual([{ name: 'registry' }]);
    });

    test('nothing is mounted when the account or the pod opts out, or the pod mounts that directory itself', async () => {
      const quiet = (await core.create(at('pods', 'apps'), pod('quiet', { serviceAccountName: 'quiet' }), {}, admin)).object.spec as any;
      expect(quiet.volumes).toBeUndefined();
      const optedOut = (await core.create(at('pods', 'apps'), pod('opted-out', { automountServiceAccountToken: false }), {}, admin)).object.spec as any;
      expect(optedOut.volumes).toBeUndefined();
      const own = (
        await core.create(
          at('pods', 'apps'),
          pod('own', {
            volumes: [{ name: 'mine', emptyDir: {} }],
            containers: [{ name: 'c', image: 'i', volumeMounts: [{ name: 'mine', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
          }),
          {},
          admin,
        )
      ).object.spec as any;
      expect(own.volumes.map((v: any) => v.name)).toEqual(['mine']);
    });

    test('a missing account is 403 in upstream words, and nothing is stored', async () => {
      const err = await refusal(core.create(at('pods', 'apps'), pod('lost', { serviceAccountName: 'ghost' }), {}, admin));
      expect(err.status).toMatchObject({
        code: 403,
        reason: 'Forbidden',
        message: 'pods "lost" is forbidden: error looking up service account apps/ghost: serviceaccount "ghost" not found',
      });
      await expect(core.get(at('pods', 'apps', 'lost'), {}, admin)).rejects.toMatchObject({ status: { code: 404 } });
    });

    test('a mirror pod may not use a service account', async () => {
      const mirror = { 'kubernetes.io/config.mirror': 'hash' };
      const err = await refusal(
        core.create(at('pods', 'apps'), pod('static', { serviceAccountName: 'builder', nodeName: 'n1' }, { annotations: mirror }), {}, admin),
      );
      expect(err.status.message).toBe('pods "static" is forbidden: a mirror pod may not reference service accounts');
      const { object } = await core.create(at('pods', 'apps'), pod('static', { nodeName: 'n1' }, { annotations: mirror }), {}, admin);
      expect((object.spec as any).serviceAccountName).toBeUndefined();
      expect((object.spec as any).volumes).toBeUndefined();
    });
  });

  describe('DefaultTolerationSeconds', () => {
    test('a new pod tolerates not-ready and unreachable nodes for 300 seconds', async () => {
      const { object } = await core.create(at('pods', 'apps'), pod('tolerant'), {}, admin);
      expect((object.spec as any).tolerations).toEqual([
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ]);
    });

    test('tolerations the pod already has are kept, and an empty key tolerates both', async () => {
      const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
      const a = (await core.create(at('pods', 'apps'), pod('own-tol', { tolerations: [own] }), {}, admin)).object.spec as any;
      expect(a.tolerations).toEqual([own, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]);
      const all = (await core.create(at('pods', 'apps'), pod('all-tol', { tolerations: [{ operator: 'Exists' }] }), {}, admin)).object.spec as any;
      expect(all.tolerations).toEqual([{ operator: 'Exists' }]);
    });
  });

  describe('NodeRestriction', () => {
    beforeAll(async () => {
      await core.create(at('pods', 'apps'), pod('on-n1', { nodeName: 'n1' }), {}, admin);
      await core.create(at('pods', 'apps'), pod('on-n2', { nodeName: 'n2' }), {}, admin);
    });

    test('a node creates and changes its own Node, not another', async () => {
      await core.create(at('nodes'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, {}, node('n1'));
      const err = await refusal(core.create(at('nodes'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } }, {}, node('n1')));
      expect(err.status).toMatchObject({ code: 403, message: 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"' });
      await core.create(at('nodes'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n2' } }, {}, admin);
      const del = await refusal(core.delete(at('nodes', undefined, 'n2'), {}, node('n1')));
      expect(del.status.message).toBe('nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"');
    });

    test('a node may not set the labels reserved for administrators, nor change its taints', async () => {
      const err = await refusal(
        core.create(
          at('nodes'),
          { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n3', labels: { 'node-restriction.kubernetes.io/pool': 'a' } } },
          {},
          node('n3'),
        ),
      );
      expect(err.status.message).toBe('nodes "n3" is forbidden: node "n3" is not allowed to set the following labels: node-restriction.kubernetes.io/pool');
      const n1 = await core.get(at('nodes', undefined, 'n1'), {}, admin);
      const tainted = { ...n1, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } };
      const taint = await refusal(core.update(at('nodes', undefined, 'n1'), tainted, {}, node('n1')));
      expect(taint.status.message).toBe('nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    });

    test('pods: only mirror pods bound to itself; status and deletion only of its own pods', async () => {
      const plain = await refusal(core.create(at('pods', 'apps'), pod('p', { nodeName: 'n1' }), {}, node('n1')));
      expect(plain.status.message).toBe(
        'pods "p" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
      );
      const mirror = { annotations: { 'kubernetes.io/config.mirror': 'x' } };
      const elsewhere = await refusal(core.create(at('pods', 'apps'), pod('m', { nodeName: 'n2' }, mirror), {}, node('n1')));
      expect(elsewhere.status.message).toBe('pods "m" is forbidden: node "n1" can only create pods with spec.nodeName set to itself');
      const secret = await refusal(
        core.create(at('pods', 'apps'), pod('m', { nodeName: 'n1', volumes: [{ name: 's', secret: { secretName: 's' } }] }, mirror), {}, node('n1')),
      );
      expect(secret.status.message).toBe('pods "m" is forbidden: node "n1" can not create pods that reference secrets');
      await core.create(at('pods', 'apps'), pod('m', { nodeName: 'n1' }, mirror), {}, node('n1'));

      const other = await core.get(at('pods', 'apps', 'on-n2'), {}, admin);
      const status = await refusal(core.update({ ...at('pods', 'apps', 'on-n2'), subresource: 'status' }, other, {}, node('n1')));
      expect(status.status.message).toBe('pods "on-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself');
      const own = await core.get(at('pods', 'apps', 'on-n1'), {}, admin);
      await core.update(
        { ...at('pods', 'apps', 'on-n1'), subresource: 'status' },
        { ...own, status: { ...(own.status as object), phase: 'Running' } },
        {},
        node('n1'),
      );

      const del = await refusal(core.delete(at('pods', 'apps', 'on-n2'), {}, node('n1')));
      expect(del.status.message).toBe('pods "on-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself');
      const upd = await refusal(core.update(at('pods', 'apps', 'on-n1'), await core.get(at('pods', 'apps', 'on-n1'), {}, admin), {}, node('n1')));
      expect(upd.status.message).toBe('pods "on-n1" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods');
    });

    test('leases: its own, in the node-lease namespace', async () => {
      const lease = (name: string) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name } });
      await core.create(at('leases', 'kube-node-lease', undefined, 'coordination.k8s.io'), lease('n1'), {}, node('n1'));
      const other = await refusal(core.create(at('leases', 'kube-node-lease', undefined, 'coordination.k8s.io'), lease('n2'), {}, node('n1')));
      expect(other.status.message).toBe('leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node');
      const ns = await refusal(core.create(at('leases', 'apps', undefined, 'coordination.k8s.io'), lease('n1'), {}, node('n1')));
      expect(ns.status.message).toBe('leases.coordination.k8s.io "n1" is forbidden: can only access leases in the "kube-node-lease" namespace');
    });
  });
});
