/**
 * admissionregistration/v1 webhook configurations through the real generic store: upstream's
 * defaults, every validation rule in upstream's words and paths, update ratcheting, generation.
 */
import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from '../../../src/core/resources';
import { create, definition, stored, update } from './through-store';

const validating = definition('validatingwebhookconfigurations');
const mutating = definition('mutatingwebhookconfigurations');

const RULE = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] };

function hook(extra: Record<string, unknown> = {}) {
  return {
    name: 'check.example.com',
    clientConfig: { service: { namespace: 'ns', name: 'svc' } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    rules: [RULE],
    ...extra,
  };
}

const config = (...webhooks: unknown[]) => ({ metadata: { name: 'hooks' }, webhooks });

/** The messages of a validating configuration holding one webhook with `extra`. */
async function messagesOf(extra: Record<string, unknown>): Promise<string[]> {
  return (await create<ValidatingWebhookConfiguration>(validating, config(hook(extra)))).messages;
}

describe('webhook configuration defaults (SetDefaults_*Webhook, _Rule, _ServiceReference)', () => {
  it('fills failurePolicy, matchPolicy, selectors, timeout, rule scope and service port; reinvocationPolicy on mutating ones', async () => {
    const { object, messages } = await create<MutatingWebhookConfiguration>(mutating, config(hook()));
    expect(messages).toEqual([]);
    const wh = object.webhooks![0]!;
    expect(wh).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    });
    expect(wh.clientConfig.service?.port).toBe(443);
    expect(wh.rules![0]!.scope).toBe('*');
    expect(object.metadata?.generation).toBe(1);

    const v = (await create<ValidatingWebhookConfiguration>(validating, config(hook()))).object.webhooks![0]!;
    expect(v).not.toHaveProperty('reinvocationPolicy');
    expect(v.timeoutSeconds).toBe(10);
  });

  it('keeps what the client set', async () => {
    const { object } = await create<ValidatingWebhookConfiguration>(
      validating,
      config(
        hook({
          failurePolicy: 'Ignore',
          matchPolicy: 'Exact',
          timeoutSeconds: 5,
          namespaceSelector: { matchLabels: { a: 'b' } },
          clientConfig: { url: 'https://hook.example.com/v' },
        }),
      ),
    );
    expect(object.webhooks![0]).toMatchObject({
      failurePolicy: 'Ignore',
      matchPolicy: 'Exact',
      timeoutSeconds: 5,
      namespaceSelector: { matchLabels: { a: 'b' } },
      clientConfig: { url: 'https://hook.example.com/v' },
    });
  });
});

describe('webhook validation (ValidateValidatingWebhookConfiguration, v1)', () => {
  it('needs fully qualified webhook names, unique within the configuration', async () => {
    expect(await messagesOf({ name: '' })).toEqual(['webhooks[0].name: Required value']);
    expect(await messagesOf({ name: 'k8s.io' })).toEqual([
      'webhooks[0].name: Invalid value: "k8s.io": should be a domain with at least three segments separated by dots',
    ]);
    expect((await messagesOf({ name: 'Bad.Example.com' }))[0]).toMatch(
      /^webhooks\[0\]\.name: Invalid value: "Bad\.Example\.com": a lowercase RFC 1123 subdomain must consist of/,
    );
    const { messages } = await create(validating, config(hook(), hook()));
    expect(messages).toEqual(['webhooks[1].name: Duplicate value: "check.example.com"']);
  });

  it('needs sideEffects None or NoneOnDryRun on create', async () => {
    expect(await messagesOf({ sideEffects: null })).toEqual(['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun']);
    expect(await messagesOf({ sideEffects: 'Some' })).toEqual(['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"']);
    expect(await messagesOf({ sideEffects: 'NoneOnDryRun' })).toEqual([]);
  });

  it('needs admissionReviewVersions naming v1 or v1beta1, without duplicates, each a DNS-1035 label', async () => {
    expect(await messagesOf({ admissionReviewVersions: [] })).toEqual(['webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1']);
    expect(await messagesOf({ admissionReviewVersions: ['v2'] })).toEqual([
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2"}: must include at least one of v1, v1beta1',
    ]);
    expect(await messagesOf({ admissionReviewVersions: ['v1', 'v1'] })).toEqual([
      'webhooks[0].admissionReviewVersions[1]: Invalid value: "v1": duplicate version',
    ]);
    expect((await messagesOf({ admissionReviewVersions: ['v1', 'V2'] }))[0]).toMatch(
      /^webhooks\[0\]\.admissionReviewVersions\[1\]: Invalid value: "V2": a DNS-1035 label must consist of/,
    );
  });

  it('checks failurePolicy, matchPolicy, timeoutSeconds and reinvocationPolicy', async () => {
    expect(await messagesOf({ failurePolicy: 'Maybe', matchPolicy: 'Fuzzy', timeoutSeconds: 31 })).toEqual([
      'webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
      'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
    ]);
    expect(await messagesOf({ timeoutSeconds: 0 })).toEqual([
      'webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds',
    ]);
    const { messages } = await create(mutating, config(hook({ reinvocationPolicy: 'Always' })));
    expect(messages).toEqual(['webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"']);
  });

  it('needs exactly one of url and service', async () => {
    const none = ['webhooks[0].clientConfig: Required value: exactly one of url or service is required'];
    expect(await messagesOf({ clientConfig: {} })).toEqual(none);
    expect(await messagesOf({ clientConfig: { url: 'https://a.example.com', service: { namespace: 'ns', name: 'svc' } } })).toEqual(none);
  });

  it('takes only https URLs with a host and no user information, query or fragment', async () => {
    const form = '; desired format: https://host[/path]';
    expect(await messagesOf({ clientConfig: { url: 'http://u:p@hook.example.com/x?a=b#frag' } })).toEqual([
      `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme${form}`,
      'webhooks[0].clientConfig.url: Invalid value: "u:p": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "a=b": query parameters are not permitted in the URL',
    ]);
    expect(await messagesOf({ clientConfig: { url: 'https:///path' } })).toEqual([
      `webhooks[0].clientConfig.url: Invalid value: "": host must be provided${form}`,
    ]);
    expect(await messagesOf({ clientConfig: { url: 'https://[::1/x' } })).toEqual([
      `webhooks[0].clientConfig.url: Required value: url must be a valid URL: parse "https://[::1/x": missing ']' in host${form}`,
    ]);
  });

  it('checks the service reference: name, namespace, port and path segments', async () => {
    expect(await messagesOf({ clientConfig: { service: { namespace: '', name: '', port: 0, path: 'foo//Bar/' } } })).toEqual([
      'webhooks[0].clientConfig.service.name: Required value: service name is required',
      'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required',
      'webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
      `webhooks[0].clientConfig.service.path: Invalid value: "foo//Bar/": must start with a '/'`,
      'webhooks[0].clientConfig.service.path: Invalid value: "foo//Bar/": segment[1] may not be empty',
      expect.stringMatching(/^webhooks\[0\]\.clientConfig\.service\.path: Invalid value: "foo\/\/Bar\/": segment\[2\]: a lowercase RFC 1123 subdomain/),
    ]);
    expect(await messagesOf({ clientConfig: { service: { namespace: 'ns', name: 'svc', path: '//' } } })).toEqual([
      'webhooks[0].clientConfig.service.path: Invalid value: "//": segment[0] may not be empty',
    ]);
    expect(await messagesOf({ clientConfig: { service: { namespace: 'ns', name: 'svc', path: '/validate/pods' } } })).toEqual([]);
  });

  it('validates rules: operations, groups, versions, resources with wildcards and subresources, scope', async () => {
    const rule = (r: Record<string, unknown>) => ({ rules: [{ ...RULE, ...r }] });
    expect(await messagesOf(rule({ operations: [], apiGroups: [], apiVersions: [], resources: [] }))).toEqual([
      'webhooks[0].rules[0].operations: Required value',
      'webhooks[0].rules[0].apiGroups: Required value',
      'webhooks[0].rules[0].apiVersions: Required value',
      'webhooks[0].rules[0].resources: Required value',
    ]);
    expect(await messagesOf(rule({ operations: ['*', 'PATCH'], apiGroups: ['*', 'apps'], apiVersions: ['*', ''], scope: 'Global' }))).toEqual([
      `webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{"*", "PATCH"}: if '*' is present, must not specify other operations`,
      'webhooks[0].rules[0].operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      `webhooks[0].rules[0].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other API groups`,
      `webhooks[0].rules[0].apiVersions: Invalid value: []string{"*", ""}: if '*' is present, must not specify other API versions`,
      'webhooks[0].rules[0].apiVersions[1]: Required value',
      'webhooks[0].rules[0].scope: Unsupported value: "Global": supported values: "*", "Cluster", "Namespaced"',
    ]);
    expect(await messagesOf(rule({ resources: ['*/*', 'pods'] }))).toEqual([
      `webhooks[0].rules[0].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`,
    ]);
    expect(await messagesOf(rule({ resources: ['*', 'pods'] }))).toEqual([
      `webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources without subresources`,
    ]);
    expect(await messagesOf(rule({ resources: ['pods/*', 'pods/status', '*/scale', 'deployments/scale', ''] }))).toEqual([
      `webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
      `webhooks[0].rules[0].resources[3]: Invalid value: "deployments/scale": if '*/scale' is present, must not specify deployments/scale`,
      'webhooks[0].rules[0].resources[4]: Required value',
    ]);
    expect(await messagesOf(rule({ resources: ['*', 'pods/status'], scope: 'Namespaced' }))).toEqual([]);
  });

  it('validates label selectors strictly on create', async () => {
    const messages = await messagesOf({
      namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] },
      objectSelector: { matchLabels: { a: 'bad value' } },
    });
    expect(messages[0]).toBe("webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'");
    expect(messages[1]).toMatch(/^webhooks\[0\]\.objectSelector\.matchLabels: Invalid value: "bad value": a valid label must be/);
  });

  it('validates match conditions: at most 64, unique qualified names, CEL that compiles to bool without params', async () => {
    const mc = (name: string, expression: string) => ({ name, expression });
    expect(await messagesOf({ matchConditions: [mc('a', 'true'), mc('a', 'object.metadata.name == "x"')] })).toEqual([
      'webhooks[0].matchConditions[1].name: Duplicate value: "a"',
    ]);
    expect(await messagesOf({ matchConditions: [mc('', ' ')] })).toEqual([
      'webhooks[0].matchConditions[0].expression: Required value',
      'webhooks[0].matchConditions[0].name: Required value',
    ]);
    expect((await messagesOf({ matchConditions: [mc('bad name', 'true')] }))[0]).toMatch(
      /^webhooks\[0\]\.matchConditions\[0\]\.name: Invalid value: "bad name": name part must consist of/,
    );
    expect(await messagesOf({ matchConditions: [mc('p', 'params.x == 1')] })).toEqual([
      "webhooks[0].matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^",
    ]);
    expect(await messagesOf({ matchConditions: [mc('s', "'yes'")] })).toEqual([
      `webhooks[0].matchConditions[0].expression: Invalid value: "'yes'": must evaluate to bool`,
    ]);
    expect((await messagesOf({ matchConditions: [mc('x', 'object.a ==')] }))[0]).toMatch(
      /^webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "object\.a ==": compilation failed: ERROR: <input>:1:/,
    );
    const many = Array.from({ length: 65 }, (_, i) => mc(`c${i}`, 'true'));
    expect(await messagesOf({ matchConditions: many })).toEqual(['webhooks[0].matchConditions: Too many: 65: must have at most 64 items']);
    expect(
      await messagesOf({ matchConditions: [mc('ok', "request.userInfo.username != 'x' && authorizer.group('').resource('pods').check('get').allowed()")] }),
    ).toEqual([]);
  });
});

describe('webhook configuration updates (ValidateValidatingWebhookConfigurationUpdate)', () => {
  it('keeps accepting sideEffects Unknown and unknown review versions the stored object already had', async () => {
    const legacy = { ...config(hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v0'] })), metadata: { name: 'legacy', generation: 1 } };
    const changed = { ...legacy, webhooks: [hook({ sideEffects: 'Some', admissionReviewVersions: ['v0'], timeoutSeconds: 3 })] };
    const { errors, object } = await update<ValidatingWebhookConfiguration>(validating, changed, legacy);
    expect(errors).toEqual([]);
    expect(object.webhooks![0]!.sideEffects).toBe('Some');
    expect(object.metadata?.generation).toBe(2);
    // Not once every stored webhook has none.
    const clean = await stored<ValidatingWebhookConfiguration>(validating, config(hook()));
    const bad = await update(validating, { ...clean, webhooks: [hook({ sideEffects: 'Some' })] }, clean);
    expect(bad.messages).toEqual(['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"']);
    expect((await update(validating, { ...legacy, webhooks: [hook({ sideEffects: 'Unknown' })] }, legacy)).messages).toEqual([]);
  });

  it('keeps duplicate names the stored object had, and does not recompile unchanged match conditions', async () => {
    const old = { metadata: { name: 'dups' }, webhooks: [hook({ matchConditions: [{ name: 'm', expression: 'params.x' }] }), hook()] };
    expect((await update(validating, { ...old, webhooks: [...old.webhooks] }, old)).messages).toEqual([]);
    const touched = { ...old, webhooks: [hook({ matchConditions: [{ name: 'm', expression: 'params.y' }] }), hook()] };
    expect((await update(validating, touched, old)).messages[0]).toMatch(/undeclared reference to 'params'/);
  });

  it('leaves the generation alone when the webhooks do not change', async () => {
    const current = await stored<MutatingWebhookConfiguration>(mutating, config(hook()));
    const { object } = await update<MutatingWebhookConfiguration>(mutating, { ...current, metadata: { ...current.metadata, labels: { a: 'b' } } }, current);
    expect(object.metadata?.generation).toBe(1);
    expect(object.metadata?.labels).toEqual({ a: 'b' });
  });
});
