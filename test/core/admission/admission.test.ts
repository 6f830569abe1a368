/**
 * The admission chain as the core runs it on the embedded store: NamespaceLifecycle as upstream
 * (404 / 403 on create, the system namespaces cannot be deleted), and further plugins in order —
 * the mutating phase before the strategy, the validating phase after validation and before
 * storage, nothing stored when a plugin refuses.
 */
import { Admission, type AdmissionAttributes, type AdmissionMetrics, type AdmissionPlugin, namespaceLifecycle } from '../../../src/core/admission';
import type { ApiObject } from '../../../src/core';
import { StatusError, forbidden, notFound } from '../../../src/status';
import { cm, coreBackend, ctx, nsTarget } from '../registry/core-backends';

/** The Status a rejected call carried. */
function statusOf(err: unknown) {
  if (!(err instanceof StatusError)) throw new Error(`expected a StatusError, got ${String(err)}`);
  return err.status;
}

const backend = coreBackend('embedded');
afterEach(() => backend.closeAll());
afterAll(() => backend.teardown());

const configMap = (name: string, extra: Partial<ApiObject> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { a: '1' },
  ...extra,
});

describe('NamespaceLifecycle', () => {
  it('refuses to delete the system namespaces, as upstream', async () => {
    const { core } = await backend.open();
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const err = await core.delete(nsTarget(name), {}, ctx).catch((e: unknown) => e);
      expect(statusOf(err)).toMatchObject({ code: 403, reason: 'Forbidden', message: `namespaces "${name}" is forbidden: this namespace may not be deleted` });
    }
    expect((await core.get(nsTarget('default'), {}, ctx)).metadata?.deletionTimestamp).toBeUndefined();
  });

  it('refuses content in a namespace that does not exist', async () => {
    const { core } = await backend.open();
    const err = await core.create(cm('nowhere'), configMap('c'), {}, ctx).catch((e: unknown) => e);
    expect(statusOf(err)).toMatchObject({ code: 404, reason: 'NotFound', message: 'namespaces "nowhere" not found' });
  });
});

describe('further admission plugins', () => {
  function recorder(name: string, seen: string[], hooks: Partial<Pick<AdmissionPlugin, 'admit' | 'validate'>> = {}): AdmissionPlugin {
    return {
      name,
      admit: (a) => {
        seen.push(`${name}.admit ${a.operation} ${a.resource}/${a.subresource} ${a.namespace ?? ''}/${a.name} dryRun=${a.dryRun} user=${a.user.username}`);
        return hooks.admit?.(a);
      },
      validate: (a) => {
        seen.push(`${name}.validate ${a.operation} ${a.resource}/${a.subresource} ${a.namespace ?? ''}/${a.name}`);
        return hooks.validate?.(a);
      },
    };
  }

  it('run in order on create: every mutating phase before the strategy, every validating phase after it', async () => {
    const seen: string[] = [];
    let validatedName = '';
    const first = recorder('First', seen, {
      admit: (a) => {
        // Mutating: a label added here is stored.
        a.object!.metadata = { ...a.object!.metadata, labels: { admitted: 'yes' } };
      },
      validate: (a) => {
        // Validating: sees the object after the strategy (the generated name is set).
        validatedName = a.object!.metadata!.name!;
      },
    });
    const { core } = await backend.open({ admission: [first, recorder('Second', seen)] });
    // The system namespaces created at start went through the chain too.
    expect(seen.filter((l) => l.startsWith('First.admit CREATE namespaces/'))).toHaveLength(4);
    seen.length = 0;
    const created = await core.create(cm('default'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } }, {}, ctx);
    expect(seen).toEqual([
      'First.admit CREATE configmaps/ default/ dryRun=false user=admin',
      'Second.admit CREATE configmaps/ default/ dryRun=false user=admin',
      `First.validate CREATE configmaps/ default/${created.object.metadata!.name}`,
      `Second.validate CREATE configmaps/ default/${created.object.metadata!.name}`,
    ]);
    expect(validatedName).toMatch(/^gen-[a-z0-9]{5}$/);
    expect(created.object.metadata?.labels).toEqual({ admitted: 'yes' });
  });

  it('see updates, patches and /status writes with the stored object, and dry runs as such', async () => {
    const seen: string[] = [];
    const olds: Array<string | undefined> = [];
    const plugin = recorder('P', seen, { validate: (a) => void olds.push(a.oldObject?.metadata?.resourceVersion) });
    const { core } = await backend.open({ admission: [plugin] });
    const created = await core.create(cm('default'), configMap('c'), {}, ctx);
    seen.length = 0;
    olds.length = 0;
    await core.patch(cm('default', 'c'), { type: 'merge', body: { data: { a: '2' } } }, { dryRun: ['All'] }, ctx);
    expect(seen).toEqual(['P.admit UPDATE configmaps/ default/c dryRun=true user=admin', 'P.validate UPDATE configmaps/ default/c']);
    expect(olds).toEqual([created.object.metadata!.resourceVersion]);
  });

  it('refuse with their own Status, and nothing is stored', async () => {
    const deny: AdmissionPlugin = {
      name: 'Deny',
      validate: (a: AdmissionAttributes) => {
        if (a.object?.data && (a.object.data as Record<string, string>).forbidden)
          throw forbidden({ group: '', resource: a.resource }, a.name, 'denied by Deny');
      },
    };
    const { core } = await backend.open({ admission: [deny] });
    const err = await core.create(cm('default'), configMap('c', { data: { forbidden: 'x' } }), {}, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect(statusOf(err)).toMatchObject({ code: 403, message: 'configmaps "c" is forbidden: denied by Deny' });
    await expect(core.get(cm('default', 'c'), {}, ctx)).rejects.toMatchObject({ status: { code: 404 } });
  });
});

describe('the chain itself', () => {
  const attrs = {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    subresource: '',
    namespace: 'default',
    name: 'c',
    dryRun: false,
    user: { username: 'u', groups: [] },
  } as AdmissionAttributes;

  it('runs plugins in order whether they answer at once or later, and reports an outside patch from either', async () => {
    const seen: string[] = [];
    const sync = (name: string, patched = false): AdmissionPlugin => ({
      name,
      admit: () => (seen.push(`admit ${name}`), patched),
      validate: () => void seen.push(`validate ${name}`),
    });
    const later = (name: string, patched = false): AdmissionPlugin => ({
      name,
      admit: async () => (await Promise.resolve(), seen.push(`admit ${name}`), patched),
      validate: async () => void (await Promise.resolve(), seen.push(`validate ${name}`)),
    });
    // All answering at once: the phases answer at once too.
    const quick = new Admission([sync('a'), sync('b', true)]);
    expect(quick.admit(attrs)).toBe(true);
    expect(quick.validate(attrs)).toBeUndefined();
    seen.length = 0;
    const mixed = new Admission([sync('a'), later('b', true), sync('c'), later('d')]);
    const admitted = mixed.admit(attrs);
    expect(admitted).toBeInstanceOf(Promise);
    expect(await admitted).toBe(true);
    await mixed.validate(attrs);
    expect(seen).toEqual(['admit a', 'admit b', 'admit c', 'admit d', 'validate a', 'validate b', 'validate c', 'validate d']);
    expect(await new Admission([later('x'), sync('y')]).admit(attrs)).toBe(false);
  });

  it('fails only by a rejected promise, and no plugin after the refusing one runs', async () => {
    const ran: string[] = [];
    const refusing: AdmissionPlugin = {
      name: 'refusing',
      admit: () => {
        throw forbidden({ group: '', resource: 'configmaps' }, 'c', 'no');
      },
      validate: () => {
        throw forbidden({ group: '', resource: 'configmaps' }, 'c', 'still no');
      },
    };
    const after: AdmissionPlugin = { name: 'after', admit: () => void ran.push('admit'), validate: () => void ran.push('validate') };
    const chain = new Admission([refusing, after]);
    let admit: unknown;
    expect(() => (admit = chain.admit(attrs))).not.toThrow();
    await expect(admit).rejects.toMatchObject({ code: 403 });
    let validate: unknown;
    expect(() => (validate = chain.validate(attrs))).not.toThrow();
    await expect(validate).rejects.toMatchObject({ code: 403 });
    const lateRefusal = new Admission([{ name: 'later', admit: async () => {}, validate: async () => {} }, refusing, after]);
    await expect(lateRefusal.admit(attrs)).rejects.toMatchObject({ code: 403 });
    await expect(lateRefusal.validate(attrs)).rejects.toMatchObject({ code: 403 });
    expect(ran).toEqual([]);
  });
});

describe('the chain with metrics', () => {
  const attrs = {
    operation: 'UPDATE',
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    subresource: '',
    namespace: 'default',
    name: 'c',
    dryRun: false,
    user: { username: 'u', groups: [] },
  } as AdmissionAttributes;
  const recorder = () => {
    const reports: string[] = [];
    const metrics: AdmissionMetrics = {
      step: (type, operation, rejected, seconds) => void reports.push(`step ${type} ${operation} ${rejected} ${seconds >= 0}`),
      plugin: (name, type, operation, rejected, seconds) => void reports.push(`${name} ${type} ${operation} ${rejected} ${seconds >= 0}`),
      webhook: () => undefined,
      webhookRejection: () => undefined,
      webhookFailOpen: () => undefined,
      policyCheck: () => undefined,
    };
    return { reports, metrics };
  };

  it('reports each plugin phase and the whole phase once it settled, answering as before', async () => {
    const { reports, metrics } = recorder();
    const chain = new Admission(
      [
        { name: 'Quick', admit: () => true, validate: () => undefined },
        { name: 'Later', admit: async () => false },
        { name: 'ValidateOnly', validate: async () => undefined },
      ],
      metrics,
    );
    expect(await chain.admit(attrs)).toBe(true);
    await chain.validate(attrs);
    expect(reports).toEqual([
      'Quick admit UPDATE false true',
      'Later admit UPDATE false true',
      'step admit UPDATE false true',
      'Quick validate UPDATE false true',
      'ValidateOnly validate UPDATE false true',
      'step validate UPDATE false true',
    ]);
    // Answering synchronously stays synchronous.
    const quick = new Admission([{ name: 'Quick', admit: () => false, validate: () => undefined }], metrics);
    expect(quick.admit(attrs)).toBe(false);
    expect(quick.validate(attrs)).toBeUndefined();
  });

  it('a refusal, thrown or rejected, counts as rejected for the plugin and the phase, and still fails only by a rejected promise', async () => {
    const { reports, metrics } = recorder();
    const no = () => forbidden({ group: '', resource: 'configmaps' }, 'c', 'no');
    const chain = new Admission(
      [
        {
          name: 'Thrower',
          admit: () => {
            throw no();
          },
        },
        { name: 'Rejecter', validate: async () => Promise.reject(no()) },
      ],
      metrics,
    );
    let admit: unknown;
    expect(() => (admit = chain.admit(attrs))).not.toThrow();
    await expect(admit).rejects.toMatchObject({ code: 403 });
    await expect(chain.validate(attrs)).rejects.toMatchObject({ code: 403 });
    expect(reports).toEqual([
      'Thrower admit UPDATE true true',
      'step admit UPDATE true true',
      'Rejecter validate UPDATE true true',
      'step validate UPDATE true true',
    ]);
  });
});

describe('NamespaceLifecycle and the watch cache', () => {
  const create = {
    operation: 'CREATE',
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    subresource: '',
    namespace: 'team',
    name: 'c',
    dryRun: false,
    user: { username: 'u', groups: [] },
  } as AdmissionAttributes;
  const ns = (deleting: boolean): ApiObject => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'team', ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  });

  it('answers from the cache at once, and reads only on a miss', async () => {
    const reads: string[] = [];
    const reader = (cached: ApiObject | undefined, stored: ApiObject | undefined) => ({
      peek: () => cached,
      get: async (_ns: undefined, name: string, options: { resourceVersion?: string }) => {
        reads.push(options.resourceVersion ?? 'latest');
        if (!stored) throw notFound({ group: '', resource: 'namespaces' }, name);
        return stored;
      },
    });
    expect(namespaceLifecycle({ namespaces: reader(ns(false), undefined), immortal: [] }).admit!(create)).toBeUndefined();
    const terminating = namespaceLifecycle({ namespaces: reader(ns(true), undefined), immortal: [] }).admit!(create);
    await expect(terminating).rejects.toMatchObject({ code: 403, status: { details: { causes: [{ reason: 'NamespaceTerminating' }] } } });
    expect(reads).toEqual([]);
    // A namespace created a moment ago, not in the cache yet, is found by the most recent read.
    await expect(namespaceLifecycle({ namespaces: reader(undefined, ns(false)), immortal: [] }).admit!(create)).resolves.toBeUndefined();
    expect(reads).toEqual(['0']);
    reads.length = 0;
    await expect(namespaceLifecycle({ namespaces: reader(undefined, undefined), immortal: [] }).admit!(create)).rejects.toMatchObject({ code: 404 });
    expect(reads).toEqual(['0', 'latest']);
  });
});
