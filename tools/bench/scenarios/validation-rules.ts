/**
 * Scenario 15 (issue 53), on the chosen store (`--store`, etcd by default): what validation
 * rules cost a custom resource's writes, and what a conversion webhook costs its lists
 * (conversion-lists.ts).
 *
 * On one server, two definitions with the same schema (scenario 14's 20 properties and six
 * more), one carrying five typical `x-…-validations` rules — two fields compared, a regular
 * expression, a list's size, a quantity in an int-or-string, and a transition rule (`oldSelf`)
 * that runs on update — the other none. The same objects, byte for byte but for the kind,
 * created from 64 clients into each, side by side as scenario 14 measures (the load generator,
 * timing and alternating rounds); then merge patches from 64 clients, where the transition rule
 * and ratcheting run as well. Before measuring, objects that break each rule must be refused,
 * so the ratio is known to be the rules' cost.
 */
import { ApiClient } from '../api';
import type { Context } from '../context';
import { type Cell, type Sample, bytesPerSecond, cpuPerOp, perSecond } from '../measure';
import type { KeelsonServer } from '../processes';
import { bytes, micros, rate, ratio } from '../report';
import {
  CRDS_PATH,
  EstablishedWatch,
  GROUP,
  type Json,
  NAMING,
  type Profiler,
  bodyTemplate,
  createMany,
  customResource,
  failures,
  latency,
  measurePair,
  pollUntil,
  specSchema,
  startServer,
} from './custom-resources';

export const SCENARIO = 15;
/** Scenario 1's and 14's highest client count. */
const WRITE_CLIENTS = 64;
const RULES_NS = 'bench-rules';
/** Objects of each kind the merge patches rotate over. */
const PATCHED = 256;
export const MERGE_PATCH = 'application/merge-patch+json';

const VALIDATIONS = NAMING.extension('validations');
const INT_OR_STRING = NAMING.extension('int-or-string');

/** The five rules, as an operator's definition writes them (each with the message a user sees). */
const RULES = {
  replicas: { rule: 'self.minReplicas <= self.maxReplicas', message: 'minReplicas must not exceed maxReplicas' },
  image: {
    rule: "self.image == oldSelf.image || self.imageChangePolicy == 'Allow'",
    message: 'image is immutable unless imageChangePolicy is Allow',
  },
  appName: { rule: "self.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')", message: 'appName must be a DNS label' },
  items: { rule: 'size(self) <= 10', message: 'at most 10 items' },
  memory: {
    rule: "type(self) == int ? self <= 68719476736 : isQuantity(self) && quantity(self).compareTo(quantity('64Gi')) <= 0",
    message: 'memory must be a quantity of at most 64Gi',
  },
};

/** `spec` of the rules' definitions: scenario 14's 20 properties and the six the rules read; the rules only where `rules`. */
function ruledSpecSchema(rules: boolean): Json {
  const spec = specSchema();
  const withRules = (schema: Json, ...r: Json[]) => (rules ? { ...schema, [VALIDATIONS]: r } : schema);
  spec.properties.appName = withRules({ type: 'string', maxLength: 63 }, RULES.appName);
  spec.properties.image = { type: 'string', maxLength: 256 };
  spec.properties.imageChangePolicy = { type: 'string', enum: ['Allow', 'Deny'] };
  spec.properties.minReplicas = { type: 'integer', minimum: 0, format: 'int32' };
  spec.properties.maxReplicas = { type: 'integer', minimum: 0, format: 'int32' };
  spec.properties.memory = withRules({ [INT_OR_STRING]: true, anyOf: [{ type: 'integer' }, { type: 'string' }] }, RULES.memory);
  spec.properties.items = withRules(spec.properties.items, RULES.items);
  spec.required = ['appName', 'image', 'minReplicas', 'maxReplicas'];
  return withRules(spec, RULES.replicas, RULES.image);
}

interface VersionSpec {
  name: string;
  storage: boolean;
  spec: Json;
}

export function definition(plural: string, kind: string, versions: VersionSpec[], conversion?: Json): Json {
  return {
    apiVersion: `${NAMING.groups.apiextensions}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind, listKind: `${kind}List` },
      versions: versions.map((v) => ({
        name: v.name,
        served: true,
        storage: v.storage,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: v.spec } } },
      })),
      ...(conversion ? { conversion } : {}),
    },
  };
}

// Two kinds whose names are as long as each other, so that their objects are the same size.
const RULED = { plural: 'ruleditems', kind: 'RuledItem' };
const PLAIN = { plural: 'plainitems', kind: 'PlainItem' };
const itemsPath = (plural: string) => `/apis/${GROUP}/v1/namespaces/${RULES_NS}/${plural}`;

/** An object every rule accepts: scenario 14's custom resource and the fields the rules read. */
function ruledObject(kind: string, name: string, change: Json = {}): Json {
  const base = customResource(name, RULES_NS);
  return {
    ...base,
    apiVersion: `${GROUP}/v1`,
    kind,
    spec: {
      ...base.spec,
      appName: 'bench-app',
      image: 'registry.example.com/app:1.0',
      imageChangePolicy: 'Deny',
      minReplicas: 2,
      maxReplicas: 8,
      memory: '4Gi',
      ...change,
    },
  };
}

async function expectInvalid(api: ApiClient, method: string, path: string, body: unknown, causes: number, contentType?: string): Promise<void> {
  const res = await api.request(method, path, body, contentType ? { 'content-type': contentType } : {});
  const status = JSON.parse(res.body.toString('utf8') || '{}') as { details?: { causes?: unknown[] } };
  const got = status.details?.causes?.length ?? 0;
  if (res.status !== 422 || got !== causes)
    throw new Error(
      `${method} ${path}: expected 422 with ${causes} causes from the rules, got ${res.status} with ${got}: ${res.body.toString('utf8').slice(0, 400)}`,
    );
}

export function row(ctx: Context, name: string, c: Sample, m: Sample, reference: string, note: string, ok: string, withBytes = false): number {
  const figure = (s: Sample) => (withBytes ? `${rate(perSecond(s))}, ${bytes(bytesPerSecond(s))}/s` : rate(perSecond(s)));
  ctx.rows.push({
    scenario: SCENARIO,
    name,
    keelson: figure(c),
    reference: `${figure(m)} ${reference}`,
    ratio: ratio(perSecond(c), perSecond(m)),
    cpu: `${micros(cpuPerOp(c))} / ${micros(cpuPerOp(m))}`,
    latency: `${latency(c)}; ${latency(m)}`,
    note: `${note}${failures(c, ok)}${failures(m, ok)}`,
  });
  return perSecond(c) / perSecond(m);
}

/** Scenario 15's first part: creates and merge patches of a custom resource with five rules beside the same without them. */
export async function runValidationRules(ctx: Context): Promise<void> {
  const { server, profiler, stop } = await startServer(ctx, 'validation-rules');
  try {
    await ruleRows(ctx, server, profiler);
  } finally {
    await stop();
  }
}

async function ruleRows(ctx: Context, server: KeelsonServer, profiler?: Profiler): Promise<void> {
  const store = ctx.options.store;
  const api = new ApiClient(server.target);
  const watch = await EstablishedWatch.open(server.target);
  try {
    await api.namespace(RULES_NS);
    const ruled = definition(RULED.plural, RULED.kind, [{ name: 'v1', storage: true, spec: ruledSpecSchema(true) }]);
    const plain = definition(PLAIN.plural, PLAIN.kind, [{ name: 'v1', storage: true, spec: ruledSpecSchema(false) }]);
    for (const d of [ruled, plain]) await api.expect('POST', CRDS_PATH, d, [201]);
    await watch.all([ruled.metadata.name, plain.metadata.name], 30_000);
    for (const k of [RULED, PLAIN]) await pollUntil(api, itemsPath(k.plural), (s) => s === 200, performance.now() + 30_000);

    // The rules run: an object breaking the four that run on create is refused with one cause
    // each (the plain kind takes it), and so is a change of image while the policy says Deny.
    const bad = { minReplicas: 9, maxReplicas: 3, appName: 'Bench_App', items: Array.from({ length: 11 }, (_, i) => `i${i}`), memory: '65Gi' };
    await expectInvalid(api, 'POST', itemsPath(RULED.plural), ruledObject(RULED.kind, 'broken', bad), 4);
    await api.expect('POST', itemsPath(PLAIN.plural), ruledObject(PLAIN.kind, 'broken', bad), [201]);
    await api.expect('POST', itemsPath(RULED.plural), ruledObject(RULED.kind, 'immutable'), [201]);
    await expectInvalid(api, 'PATCH', `${itemsPath(RULED.plural)}/immutable`, { spec: { image: 'registry.example.com/app:2.0' } }, 1, MERGE_PATCH);

    const name = (i: number) => `item-${String(i).padStart(6, '0')}`;
    for (const k of [RULED, PLAIN]) await createMany(server.target, itemsPath(k.plural), PATCHED, (i) => ruledObject(k.kind, name(i)));
    const sent = JSON.stringify(ruledObject(RULED.kind, name(0))).length;
    const answered = [RULED, PLAIN].map(async (k) => (await api.request('GET', `${itemsPath(k.plural)}/${name(0)}`)).body.length);
    const sizes = `request body ${bytes(sent)} each, as answered ${(await Promise.all(answered)).map(bytes).join(' / ')}`;
    await server.settle();

    let runs = 0;
    const cell = (spec: Cell['spec']): Cell => ({
      worker: ctx.worker,
      open: { kind: 'https', target: server.target, connections: WRITE_CLIENTS },
      spec,
      serverCpu: async () => (await server.stats()).cpuUs,
    });
    const creates = (k: typeof RULED) =>
      cell(() => ({
        op: 'request',
        method: 'POST',
        paths: [itemsPath(k.plural)],
        body: bodyTemplate((n) => ruledObject(k.kind, n)),
        namePrefix: `${k.plural}-r${++runs}`,
        expect: 201,
      }));
    // Each patch sets spec.text0 to a fresh value, so every one is a real change the rules see.
    const patches = (k: typeof RULED) =>
      cell(() => ({
        op: 'request',
        method: 'PATCH',
        paths: Array.from({ length: PATCHED }, (_, i) => `${itemsPath(k.plural)}/${name(i)}`),
        body: { before: '{"spec":{"text0":"', after: '"}}' },
        namePrefix: `p${++runs}`,
        contentType: MERGE_PATCH,
        expect: 200,
      }));
    const labels = (what: string, unit: string) => ({ what, unit, subject: 'five validation rules', reference: 'no rules' });

    ctx.log(`15. create custom resource with five validation rules vs none, ${store}, ${WRITE_CLIENTS} clients`);
    const [c, m] = await measurePair(ctx, server, profiler, labels(`creates from ${WRITE_CLIENTS} clients`, 'creates'), creates(RULED), creates(PLAIN));
    const createRatio = row(
      ctx,
      `create custom resource with five validation rules over HTTPS vs the same without rules, ${store}, ${WRITE_CLIENTS} clients`,
      c!,
      m!,
      'without rules',
      `one server; two definitions with one 26-property schema, one carrying the rules (two fields compared, a regular expression, a list's size, a quantity in an int-or-string; the transition rule skipped on create); ${sizes}`,
      '201',
    );

    ctx.log(`15. merge patch of a custom resource with five validation rules vs none, ${store}, ${WRITE_CLIENTS} clients`);
    const [pc, pm] = await measurePair(ctx, server, profiler, labels(`merge patches from ${WRITE_CLIENTS} clients`, 'patches'), patches(RULED), patches(PLAIN));
    const patchRatio = row(
      ctx,
      `merge patch (spec.text0) of a custom resource with five validation rules vs the same without rules, ${store}, ${WRITE_CLIENTS} clients`,
      pc!,
      pm!,
      'without rules',
      `one server; ${PATCHED} objects of each kind, a patch's target rotating among them (a conflict is retried in the server); all five rules run, the transition rule against the old object, and the unchanged fields' rules are ratcheted`,
      '200',
    );
    ctx.budgets.push({
      budget: `custom resource with five validation rules vs without: create, ${WRITE_CLIENTS} clients`,
      target: '≥ 0.6×',
      measured: `${createRatio.toFixed(3)}× (merge patch ${patchRatio.toFixed(3)}×)`,
      met: createRatio >= 0.6,
    });
  } finally {
    watch.close();
    api.close();
  }
}
