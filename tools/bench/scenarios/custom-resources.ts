/**
 * Scenario 14: custom resources (issue 52) beside the built-in rows of the same run, on the
 * chosen store (`--store`, etcd by default).
 *
 * On one server, a CustomResourceDefinition with a 20-property schema and ConfigMaps of the same
 * request size, measured side by side: creates over HTTPS from 1, 16 and 64 keep-alive clients
 * (scenario 1's clients and load generator), gets by name from the watch cache
 * (`resourceVersion=0`, 16 clients) and consistent lists of 10,000 (2 clients, scenario 2's).
 *
 * On a second, fresh server: a definition created → its `Established` condition seen on a
 * watch, its list path answering 200, and discovery (the group version's, and aggregated
 * `/apis`) listing it, each timed from sending the create (median and highest of ten); then
 * 1,000 definitions (100 groups of 10, each with the same 20-property schema) created by 16
 * clients: the time until every one is Established (one watch) and until every one's list path
 * answers 200 (one connection asking them in the order they were Established), the latency of
 * `/apis` (aggregated and legacy), `/openapi/v2` and `/openapi/v3` with them beside the same
 * requests before them, and the heap they add per definition (heapUsed after a full GC with
 * them, minus before, ÷ 1,000).
 *
 * `--profile=custom-resources` runs both servers under --cpu-prof and summarises each measured
 * window alone (one round per cell; creates from 64 clients only): the custom resource's and
 * the ConfigMap's creates, gets and lists, the 1,000 definitions' install, each discovery and
 * OpenAPI request. With `--profile-out f.cpuprofile` the profiles are kept as
 * `f-<server>.cpuprofile`, their windows beside them (`.windows.json`).
 */
import { copyFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ApiClient } from '../api';
import type { Context } from '../context';
import { HttpsConnection, type Target, requestHead } from '../https-client';
import { type Cell, type Sample, bytesPerSecond, cpuPerOp, etcdRpcCounts, perSecond, sideBySide } from '../measure';
import { type KeelsonServer, type StoreChoice, startKeelson } from '../processes';
import { renderProfileSummary, summarizeProfile } from '../profile-summary';
import { bytes, micros, ms, rate, ratio } from '../report';
import { createNaming } from '../../../src/naming';
import { CLIENTS } from './create';

/** The bench's server runs with the default naming profile. */
export const NAMING = createNaming('platform');
export const CRDS_PATH = `/apis/${NAMING.groups.apiextensions}/v1/customresourcedefinitions`;
const AGGREGATED = `application/json;g=${NAMING.groups.apiDiscovery};v=v2;as=APIGroupDiscoveryList`;
const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

export const GROUP = 'bench.example.com';
const PLURAL = 'benchitems';
const CREATE_NS = 'bench-cr-create';
const LIST_NS = 'bench-cr-list';
const LIST_SIZE = 10_000;
const GET_CLIENTS = 16;
const GET_NAMES = 100;
const LIST_CLIENTS = 2;
/** Definitions timed one at a time, created → Established and served. */
const ESTABLISH_RUNS = 10;
const MANY_CRDS = 1000;
const MANY_GROUPS = 100;
/** Clients creating the 1,000 definitions. */
const CRD_CREATORS = 16;
/** How long a definition's list path waits after a 404 before it is asked again. */
const RECHECK_MS = 10;
const MANY_TIMEOUT_MS = 600_000;
/** Requests per path for the discovery and OpenAPI latencies (after the first, timed alone). */
const LATENCY_REQUESTS = 20;

// Every server of this scenario: no ReplicaSet controller (as the others), and no root CA
// ConfigMap published into each namespace, so that a list of 10,000 ConfigMaps is 10,000.
const SERVER_ARGS = ['--controllers', '*,-replicaset,-root-ca-cert-publisher'];

export type Json = Record<string, any>;

/** The 20 properties of `spec` every bench definition has: strings, integers, booleans, a list and a map. */
export function specSchema(): Json {
  const properties: Json = {};
  for (let i = 0; i < 12; i++) properties[`text${i}`] = { type: 'string', maxLength: 256, description: `text field ${i}` };
  for (let i = 0; i < 4; i++) properties[`count${i}`] = { type: 'integer', minimum: 0, format: 'int64', description: `count ${i}` };
  for (let i = 0; i < 2; i++) properties[`flag${i}`] = { type: 'boolean', description: `flag ${i}` };
  properties.items = { type: 'array', items: { type: 'string' }, maxItems: 64 };
  properties.labels = { type: 'object', additionalProperties: { type: 'string' } };
  return { type: 'object', properties };
}

function crd(group: string, plural: string, kind: string): Json {
  return {
    apiVersion: `${NAMING.groups.apiextensions}/v1`,
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: specSchema(), status: { type: 'object', properties: { ready: { type: 'boolean' }, observed: { type: 'integer' } } } },
            },
          },
          subresources: { status: {} },
        },
      ],
    },
  };
}

const crPath = (ns: string) => `/apis/${GROUP}/v1/namespaces/${ns}/${PLURAL}`;
const cmPath = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

export const value = (i: number) => `value-${i}-${'x'.repeat(48)}`;

/** A custom resource as a client sends it: every one of the 20 fields set. */
export function customResource(name: string, ns: string): Json {
  const spec: Json = {};
  for (let i = 0; i < 12; i++) spec[`text${i}`] = value(i);
  for (let i = 0; i < 4; i++) spec[`count${i}`] = 1000 + i;
  for (let i = 0; i < 2; i++) spec[`flag${i}`] = i === 0;
  spec.items = ['alpha', 'beta', 'gamma', 'delta'];
  spec.labels = { app: 'bench', tier: 'backend', zone: 'a' };
  return {
    apiVersion: `${GROUP}/v1`,
    kind: 'BenchItem',
    metadata: { name, namespace: ns, labels: { app: 'bench', tier: 'backend' } },
    spec,
  };
}

/** A ConfigMap as a client sends it, `data` padded so that its body is the custom resource's size exactly. */
function configMap(name: string, ns: string): Json {
  const data: Record<string, string> = {};
  for (let i = 0; i < 12; i++) data[`key${i}`] = value(i);
  data.rest = '';
  const object: Json = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns, labels: { app: 'bench', tier: 'backend' } }, data };
  const want = JSON.stringify(customResource(name, ns)).length;
  const have = JSON.stringify(object).length;
  if (have > want) throw new Error(`the ConfigMap (${have} B) is larger than the custom resource (${want} B)`);
  data.rest = 'y'.repeat(want - have);
  return object;
}

/** A request body with the name left open (the load generator's `before + name + after`). */
export function bodyTemplate(make: (name: string) => Json): { before: string; after: string } {
  const marker = '__BENCH_NAME__';
  const text = JSON.stringify(make(marker));
  const at = text.indexOf(marker);
  return { before: text.slice(0, at), after: text.slice(at + marker.length) };
}

export const latency = (s: Sample) => `${ms(s.latency.percentile(50))} / ${ms(s.latency.percentile(99))}`;

export function failures(s: Sample, ok: string): string {
  const bad = Object.entries(s.outcomes).filter(([label]) => label !== ok);
  return bad.length ? `; failures: ${bad.map(([l, n]) => `${l}×${n}`).join(', ')}` : '';
}

export async function sleep(msToWait: number): Promise<void> {
  await new Promise((r) => setTimeout(r, msToWait));
}

/** `count` objects POSTed to `path` by `concurrency` clients, `make(i)` each. */
export async function createMany(target: Target, path: string, count: number, make: (i: number) => Json, concurrency = 16): Promise<void> {
  let next = 0;
  const clients = Array.from({ length: concurrency }, () => new ApiClient(target));
  try {
    await Promise.all(
      clients.map(async (api) => {
        for (let i = next++; i < count; i = next++) await api.expect('POST', path, make(i), [201]);
      }),
    );
  } finally {
    for (const c of clients) c.close();
  }
}

/**
 * One watch of every CustomResourceDefinition: when each was first seen Established (the
 * arrival of the event's bytes, on this process's clock).
 */
export class EstablishedWatch {
  readonly established = new Map<string, number>();
  /** The names in the order they were seen Established. */
  readonly order: string[] = [];
  private waiters: Array<() => void> = [];
  private buffered = '';

  private constructor(private readonly conn: HttpsConnection) {}

  static async open(target: Target): Promise<EstablishedWatch> {
    const api = new ApiClient(target);
    const list = await api.expect('GET', CRDS_PATH, undefined, [200]).finally(() => api.close());
    const rv = (list.metadata as { resourceVersion: string }).resourceVersion;
    const conn = await HttpsConnection.connect(target);
    const watch = new EstablishedWatch(conn);
    for (const item of list.items as Json[]) watch.saw(item, performance.now());
    conn
      .request(requestHead('GET', `${CRDS_PATH}?watch=1&resourceVersion=${rv}`, target), undefined, { onBody: (c, at) => watch.onBody(c, at) })
      .catch(() => {});
    return watch;
  }

  private onBody(chunk: Buffer, at: number): void {
    const lines = (this.buffered + chunk.toString('utf8')).split('\n');
    this.buffered = lines.pop()!;
    for (const line of lines) if (line.trim()) this.saw(JSON.parse(line).object as Json, at);
  }

  private saw(object: Json, at: number): void {
    const name = object?.metadata?.name as string | undefined;
    if (!name || this.established.has(name)) return;
    const conditions = (object.status?.conditions ?? []) as { type: string; status: string }[];
    if (!conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    this.established.set(name, at);
    this.order.push(name);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once every one of `names` has been seen Established; rejects after `timeoutMs`. */
  async all(names: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!names.every((n) => this.established.has(n))) {
      if (performance.now() > deadline)
        throw new Error(`${names.filter((n) => !this.established.has(n)).length} definitions not Established after ${timeoutMs} ms`);
      await Promise.race([new Promise<void>((r) => this.waiters.push(r)), sleep(100)]);
    }
  }

  close(): void {
    this.conn.close();
  }
}

/** Ask `path` again and again on `api` until `ok`; resolves with when it first was. */
export async function pollUntil(
  api: ApiClient,
  path: string,
  ok: (status: number, body: Buffer) => boolean,
  deadline: number,
  headers: Record<string, string> = {},
): Promise<number> {
  for (;;) {
    const res = await api.request('GET', path, undefined, headers);
    const at = performance.now();
    if (ok(res.status, res.body)) return at;
    // A breath between polls: three connections asking back to back would load the server they time.
    await sleep(1);
    if (at > deadline) throw new Error(`GET ${path}: still ${res.status} after the deadline`);
  }
}

function aggregatedLists(body: Buffer, group: string, plural: string): boolean {
  const list = JSON.parse(body.toString('utf8')) as { items?: { metadata?: { name?: string }; versions?: { resources?: { resource: string }[] }[] }[] };
  const g = list.items?.find((i) => i.metadata?.name === group);
  return !!g?.versions?.some((v) => v.resources?.some((r) => r.resource === plural));
}

function groupVersionLists(body: Buffer, plural: string): boolean {
  const list = JSON.parse(body.toString('utf8')) as { resources?: { name: string }[] };
  return !!list.resources?.some((r) => r.name === plural);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `--profile=custom-resources`: the scenario's servers run under --cpu-prof, and each measured
 * window (a cell of one round, or the 1,000 definitions' install) is summarised on its own.
 */
export class Profiler {
  readonly windows: { title: string; startUs: number; endUs: number; line: string }[] = [];
  constructor(
    private readonly ctx: Context,
    readonly dir: string,
    private readonly label: string,
  ) {}

  /** `cell` with its measured window recorded under `title`. */
  track(cell: Cell, server: KeelsonServer, title: string, line: (s: Sample) => string): { cell: Cell; done(s: Sample): void } {
    const marks: number[] = [];
    return {
      cell: {
        ...cell,
        serverCpu: async () => {
          const stats = await server.stats();
          marks.push(stats.hrtimeUs);
          return stats.cpuUs;
        },
      },
      done: (s) => {
        if (marks.length >= 2) this.windows.push({ title, startUs: marks[0]!, endUs: marks[marks.length - 1]!, line: line(s) });
      },
    };
  }

  /** Summarise every window once the server has stopped (V8 writes the profile on exit). */
  async summarise(): Promise<void> {
    const file = (await readdir(this.dir)).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('no .cpuprofile written');
    const full = path.join(this.dir, file);
    const out = this.ctx.options.profileOut?.replace(/(\.cpuprofile)?$/, `-${this.label}$1`);
    if (out) {
      await copyFile(full, out);
      // The windows (µs on the profiled process's clock), to cut the profile again later.
      await writeFile(`${out}.windows.json`, `${JSON.stringify(this.windows, null, 1)}\n`);
    }
    for (const w of this.windows) {
      const summary = summarizeProfile(full, { startUs: w.startUs, endUs: w.endUs }, 25);
      this.ctx.sections.push(`${renderProfileSummary(summary, w.title)}\n\n${w.line}${out ? `; profile saved to ${out}` : ''}`);
    }
  }
}

export interface Started {
  server: KeelsonServer;
  profiler?: Profiler;
  /** etcd's client URL, when the store is etcd. */
  etcdEndpoint?: string;
  stop(): Promise<void>;
}

export async function startServer(ctx: Context, label: string): Promise<Started> {
  const profiler = ctx.options.profile === 'custom-resources' ? new Profiler(ctx, await ctx.tmpDir(`cpu-prof-${label}`), label) : undefined;
  let store: StoreChoice = { kind: 'embedded' };
  let stopEtcd = async () => {};
  let etcdEndpoint: string | undefined;
  if (ctx.options.store === 'etcd') {
    const etcd = await ctx.etcd();
    store = { kind: 'etcd', endpoint: etcd.endpoint };
    etcdEndpoint = etcd.endpoint;
    stopEtcd = () => etcd.stop();
  }
  const server = await startKeelson(ctx.build, { store, dataDir: await ctx.tmpDir(label), serverArgs: SERVER_ARGS, cpuProfDir: profiler?.dir });
  return {
    server,
    profiler,
    etcdEndpoint,
    stop: async () => {
      await server.stop();
      await stopEtcd();
      await profiler?.summarise();
    },
  };
}

export async function runCustomResources(ctx: Context): Promise<void> {
  {
    const { server, profiler, stop } = await startServer(ctx, 'custom-resources');
    try {
      await sideBySideRows(ctx, server, profiler);
    } finally {
      await stop();
    }
  }
  {
    const { server, profiler, etcdEndpoint, stop } = await startServer(ctx, 'custom-resource-definitions');
    try {
      await establishRows(ctx, server);
      await manyDefinitions(ctx, server, profiler, etcdEndpoint);
    } finally {
      await stop();
    }
  }
}

/**
 * Two cells side by side (sideBySide). Under --profile=custom-resources, one round per cell,
 * each cell's window summarised alone as `Profile of <what>: <subject or reference>`.
 */
export async function measurePair(
  ctx: Context,
  server: KeelsonServer,
  profiler: Profiler | undefined,
  labels: { what: string; unit: string; subject: string; reference: string },
  c: Cell,
  m: Cell,
): Promise<Sample[]> {
  if (!profiler) return sideBySide([c, m], ctx.timing);
  const store = ctx.options.store;
  const line = (s: Sample) => `${rate(perSecond(s), ` ${labels.unit}/s`)}, ${micros(cpuPerOp(s))} µs server CPU each while profiled (the profiler adds some)`;
  const tc = profiler.track(c, server, `Profile of ${labels.what}: ${labels.subject} (${store}, measured window only)`, line);
  const tm = profiler.track(m, server, `Profile of ${labels.what}: ${labels.reference} (${store}, measured window only)`, line);
  const samples = await sideBySide([tc.cell, tm.cell], { ...ctx.timing, rounds: 1 });
  tc.done(samples[0]!);
  tm.done(samples[1]!);
  return samples;
}

/** Creates, cached gets and lists of 10,000: the custom resource beside the ConfigMap of the same size. */
async function sideBySideRows(ctx: Context, server: KeelsonServer, profiler?: Profiler): Promise<void> {
  const store = ctx.options.store;
  const api = new ApiClient(server.target);
  const watch = await EstablishedWatch.open(server.target);
  try {
    for (const ns of [CREATE_NS, LIST_NS]) await api.namespace(ns);
    const definition = crd(GROUP, PLURAL, 'BenchItem');
    await api.expect('POST', CRDS_PATH, definition, [201]);
    await watch.all([definition.metadata.name], 30_000);
    await pollUntil(api, crPath(LIST_NS), (s) => s === 200, performance.now() + 30_000);
    const crBytes = JSON.stringify(customResource('x', CREATE_NS)).length;
    const cmBytes = JSON.stringify(configMap('x', CREATE_NS)).length;
    // The stored shapes, as the server answers a get.
    await api.expect('POST', crPath(CREATE_NS), customResource('shape', CREATE_NS), [201]);
    await api.expect('POST', cmPath(CREATE_NS), configMap('shape', CREATE_NS), [201]);
    const crStored = (await api.request('GET', `${crPath(CREATE_NS)}/shape`)).body.length;
    const cmStored = (await api.request('GET', `${cmPath(CREATE_NS)}/shape`)).body.length;
    const sizes = `request body ${bytes(crBytes)} / ${bytes(cmBytes)}, as answered ${bytes(crStored)} / ${bytes(cmStored)}`;

    const t0 = performance.now();
    const name = (i: number) => `item-${String(i).padStart(6, '0')}`;
    await createMany(server.target, crPath(LIST_NS), LIST_SIZE, (i) => customResource(name(i), LIST_NS));
    await createMany(server.target, cmPath(LIST_NS), LIST_SIZE, (i) => configMap(name(i), LIST_NS));
    ctx.log(`14. created ${LIST_SIZE} custom resources and ${LIST_SIZE} ConfigMaps in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await server.settle();

    let runs = 0;
    const createCell = (path: string, make: (name: string) => Json, clients: number, prefix: string): Cell => ({
      worker: ctx.worker,
      open: { kind: 'https', target: server.target, connections: clients },
      spec: () => ({ op: 'request', method: 'POST', paths: [path], body: bodyTemplate(make), namePrefix: `${prefix}${clients}-r${++runs}`, expect: 201 }),
      serverCpu: async () => (await server.stats()).cpuUs,
    });
    const readCell = (paths: string[], clients: number): Cell => ({
      worker: ctx.worker,
      open: { kind: 'https', target: server.target, connections: clients },
      spec: () => ({ op: 'request', method: 'GET', paths, expect: 200 }),
      serverCpu: async () => (await server.stats()).cpuUs,
    });
    const row = (name: string, c: Sample, m: Sample, note: string, ok = '201') => {
      const withBytes = ok === '200';
      ctx.rows.push({
        scenario: 14,
        name,
        keelson: withBytes ? `${rate(perSecond(c))}, ${bytes(bytesPerSecond(c))}/s` : rate(perSecond(c)),
        reference: `${withBytes ? `${rate(perSecond(m))}, ${bytes(bytesPerSecond(m))}/s` : rate(perSecond(m))} ConfigMaps`,
        ratio: ratio(perSecond(c), perSecond(m)),
        cpu: `${micros(cpuPerOp(c))} / ${micros(cpuPerOp(m))}`,
        latency: `${latency(c)}; ${latency(m)}`,
        note: `${note}${failures(c, ok)}${failures(m, ok)}`,
      });
      return perSecond(c) / perSecond(m);
    };

    const pair = (what: string, unit: string, c: Cell, m: Cell) =>
      measurePair(ctx, server, profiler, { what, unit, subject: 'custom resources', reference: 'ConfigMaps' }, c, m);

    const ratios: Record<string, number> = {};
    const top = CLIENTS[CLIENTS.length - 1]!;
    for (const clients of profiler ? [top] : CLIENTS) {
      ctx.log(`14. create custom resource vs ConfigMap, ${store}, ${clients} clients`);
      const [c, m] = await pair(
        `creates from ${clients} clients`,
        'creates',
        createCell(crPath(CREATE_NS), (n) => customResource(n, CREATE_NS), clients, 'cr'),
        createCell(cmPath(CREATE_NS), (n) => configMap(n, CREATE_NS), clients, 'cm'),
      );
      ratios[`create ${clients}`] = row(
        `create custom resource over HTTPS vs ConfigMap of the same size, ${store}, ${clients} client${clients > 1 ? 's' : ''}`,
        c!,
        m!,
        `one server; 20-property structural schema (pruned, defaulted, validated); ${sizes}`,
      );
    }

    ctx.log('14. get by name from the watch cache, custom resource vs ConfigMap');
    const names = Array.from({ length: GET_NAMES }, (_, i) => name(i));
    {
      const [c, m] = await pair(
        `gets from the watch cache, ${GET_CLIENTS} clients`,
        'gets',
        readCell(
          names.map((n) => `${crPath(LIST_NS)}/${n}?resourceVersion=0`),
          GET_CLIENTS,
        ),
        readCell(
          names.map((n) => `${cmPath(LIST_NS)}/${n}?resourceVersion=0`),
          GET_CLIENTS,
        ),
      );
      ratios.get = row(
        `get custom resource by name from the watch cache (resourceVersion=0) vs ConfigMap, ${GET_CLIENTS} clients`,
        c!,
        m!,
        `one server; ${GET_NAMES} names of each; response ${bytes(crStored)} / ${bytes(cmStored)}`,
        '200',
      );
    }

    ctx.log(`14. list ${LIST_SIZE} custom resources vs ConfigMaps`);
    {
      const crList = await api.request('GET', crPath(LIST_NS));
      const cmList = await api.request('GET', cmPath(LIST_NS));
      const items = (b: Buffer) => (JSON.parse(b.toString('utf8')) as { items: unknown[] }).items.length;
      const counted = `${items(crList.body)} / ${items(cmList.body)} items`;
      const [c, m] = await pair(
        `lists of ${LIST_SIZE.toLocaleString('en-US')}, ${LIST_CLIENTS} clients`,
        'lists',
        readCell([crPath(LIST_NS)], LIST_CLIENTS),
        readCell([cmPath(LIST_NS)], LIST_CLIENTS),
      );
      ratios.list = row(
        `list ${LIST_SIZE.toLocaleString('en-US')} custom resources (consistent) vs ${LIST_SIZE.toLocaleString('en-US')} ConfigMaps, ${LIST_CLIENTS} clients`,
        c!,
        m!,
        `one server; ${counted}; response ${bytes(crList.body.length)} / ${bytes(cmList.body.length)}`,
        '200',
      );
    }

    for (const [label, key] of [
      [`create, ${top} clients`, `create ${top}`],
      ['get from the watch cache', 'get'],
      [`list of ${LIST_SIZE.toLocaleString('en-US')}`, 'list'],
    ] as const) {
      const r = ratios[key]!;
      ctx.budgets.push({ budget: `custom resource vs ConfigMap of the same size: ${label}`, target: '≥ 0.8×', measured: `${r.toFixed(3)}×`, met: r >= 0.8 });
    }
  } finally {
    watch.close();
    api.close();
  }
}

/** A definition created → Established, its list path 200, discovery listing it; one at a time. */
async function establishRows(ctx: Context, server: KeelsonServer): Promise<void> {
  const runs = ctx.options.quick ? 3 : ESTABLISH_RUNS;
  const watch = await EstablishedWatch.open(server.target);
  const api = new ApiClient(server.target);
  const pollers = [new ApiClient(server.target), new ApiClient(server.target), new ApiClient(server.target)];
  const times = { created: [] as number[], established: [] as number[], list: [] as number[], groupVersion: [] as number[], aggregated: [] as number[] };
  try {
    await server.settle();
    // Each poller's connection open and warm before the first create.
    for (const p of pollers) await p.request('GET', '/version');
    for (let i = 0; i < runs; i++) {
      const group = `established-${i}.${GROUP}`;
      const definition = crd(group, 'probes', 'Probe');
      const name = definition.metadata.name as string;
      const deadline = performance.now() + 30_000;
      const t0 = performance.now();
      const created = api.expect('POST', CRDS_PATH, definition, [201]).then(() => performance.now());
      const [list, groupVersion, aggregated] = await Promise.all([
        pollUntil(pollers[0]!, `/apis/${group}/v1/namespaces/default/probes`, (s) => s === 200, deadline),
        pollUntil(pollers[1]!, `/apis/${group}/v1`, (s, b) => s === 200 && groupVersionLists(b, 'probes'), deadline),
        pollUntil(pollers[2]!, '/apis', (s, b) => s === 200 && aggregatedLists(b, group, 'probes'), deadline, { accept: AGGREGATED }),
      ]);
      await watch.all([name], 30_000);
      times.created.push((await created) - t0);
      times.established.push(watch.established.get(name)! - t0);
      times.list.push(list - t0);
      times.groupVersion.push(groupVersion - t0);
      times.aggregated.push(aggregated - t0);
      await sleep(200);
    }
  } finally {
    watch.close();
    api.close();
    for (const p of pollers) p.close();
  }
  const slowest = Math.max(...times.established, ...times.list, ...times.groupVersion, ...times.aggregated);
  const summary = (xs: number[]) => `${ms(median(xs) * 1000)} median, ${ms(Math.max(...xs) * 1000)} highest`;
  ctx.rows.push({
    scenario: 14,
    name: `a definition created → Established and served (one at a time, ${runs} definitions, a 20-property schema each)`,
    keelson: `Established ${ms(median(times.established) * 1000)}; list 200 ${ms(median(times.list) * 1000)}`,
    reference: '',
    ratio: '',
    cpu: '',
    latency: `highest ${ms(slowest * 1000)}`,
    note: `from sending the create, medians and highest: create answered ${summary(times.created)}; Established seen on a watch ${summary(times.established)}; the list path answering 200 ${summary(times.list)}; /apis/<group>/v1 listing it ${summary(times.groupVersion)}; aggregated /apis listing it ${summary(times.aggregated)} (each asked again about 1 ms after each answer, on its own connection)`,
  });
  ctx.budgets.push({
    budget: 'a CRD created → Established, its list path 200 and discovery listing it',
    target: '< 100 ms',
    measured: `highest ${ms(slowest * 1000)} of ${runs} (medians: Established ${ms(median(times.established) * 1000)}, served ${ms(median(times.list) * 1000)})`,
    met: slowest < 100,
  });
}

interface Timed {
  first: number;
  median: number;
  highest: number;
  bytes: number;
  /** The status when it was not 200 (the row then says so instead of timing it). */
  failed?: number;
}

/** `path` asked once (the first since the served types changed), then LATENCY_REQUESTS times more, one at a time. */
async function timeRequests(target: Target, probe: Probe, path = probe.path, more = LATENCY_REQUESTS): Promise<Timed> {
  const api = new ApiClient(target);
  try {
    await api.request('GET', '/version');
    const headers: Record<string, string> = { ...(probe.accept ? { accept: probe.accept } : {}), ...(probe.gzip ? { 'accept-encoding': 'gzip' } : {}) };
    const one = async () => {
      const t0 = performance.now();
      const res = await api.request('GET', path, undefined, headers);
      return { ms: performance.now() - t0, bytes: res.body.length, status: res.status };
    };
    const first = await one();
    if (first.status !== 200) return { first: first.ms, median: NaN, highest: NaN, bytes: first.bytes, failed: first.status };
    const rest: number[] = [];
    for (let i = 0; i < more; i++) {
      const r = await one();
      if (r.status !== 200) return { first: first.ms, median: NaN, highest: NaN, bytes: first.bytes, failed: r.status };
      rest.push(r.ms);
    }
    return { first: first.ms, median: rest.length ? median(rest) : NaN, highest: Math.max(...rest), bytes: first.bytes };
  } finally {
    api.close();
  }
}

interface Probe {
  name: string;
  /** Short, for the budget line. */
  short: string;
  path: string;
  accept?: string;
  /** Ask for gzip, as client-go does. */
  gzip?: boolean;
}

function probes(group: string): Probe[] {
  return [
    { name: 'GET /apis, aggregated discovery (apidiscovery v2)', short: '/apis aggregated', path: '/apis', accept: AGGREGATED },
    { name: 'GET /apis, legacy discovery (APIGroupList)', short: '/apis legacy', path: '/apis' },
    { name: `GET /apis/<group>/v1 (one group of ${MANY_CRDS / MANY_GROUPS})`, short: '/apis/<group>/v1', path: `/apis/${group}/v1` },
    { name: 'GET /openapi/v2 (JSON)', short: '/openapi/v2 JSON', path: '/openapi/v2' },
    {
      name: "GET /openapi/v2 (protobuf and gzip, kubectl's request)",
      short: '/openapi/v2 protobuf+gzip',
      path: '/openapi/v2',
      accept: OPENAPI_V2_PROTOBUF,
      gzip: true,
    },
    { name: 'GET /openapi/v3 (the index)', short: '/openapi/v3', path: '/openapi/v3' },
    {
      name: `GET /openapi/v3/apis/<group>/v1 (one group of ${MANY_CRDS / MANY_GROUPS})`,
      short: '/openapi/v3/apis/<group>/v1',
      path: `/openapi/v3/apis/${group}/v1`,
    },
  ];
}

const manyGroup = (i: number) => `g${String(i % MANY_GROUPS).padStart(3, '0')}.many.${GROUP}`;
const manyPlural = (i: number) => `things${String(i).padStart(4, '0')}`;

/** 1,000 definitions: time until Established and served, discovery and OpenAPI with them, heap per definition. */
async function manyDefinitions(ctx: Context, server: KeelsonServer, profiler?: Profiler, etcdEndpoint?: string): Promise<void> {
  const group0 = manyGroup(0);
  const checks = probes(group0);
  // Before: the same requests with only the built-in types (and the few definitions above);
  // the group's own paths do not exist yet, so the built-in apps/v1 stands in for them.
  const before = new Map<Probe, Timed>();
  for (const p of checks) {
    const path = p.path.replace(`/apis/${group0}/v1`, '/apis/apps/v1');
    before.set(p, await timeRequests(server.target, p, path));
  }
  await sleep(500);
  const heap0 = await server.gc();

  const definitions = Array.from({ length: MANY_CRDS }, (_, i) => crd(manyGroup(i), manyPlural(i), `Thing${String(i).padStart(4, '0')}`));
  const names = definitions.map((d) => d.metadata.name as string);
  const watch = await EstablishedWatch.open(server.target);
  const createdAt: number[] = [];
  const servedAt: number[] = [];
  ctx.log(`14. ${MANY_CRDS} definitions`);
  const rpcs0 = etcdEndpoint ? await etcdRpcCounts(etcdEndpoint) : undefined;
  const stats0 = await server.stats();
  const cpu0 = stats0.cpuUs;
  const t0 = performance.now();
  const deadline = t0 + MANY_TIMEOUT_MS;
  const creating = (async () => {
    let next = 0;
    const creators = Array.from({ length: CRD_CREATORS }, () => new ApiClient(server.target));
    try {
      await Promise.all(
        creators.map(async (api) => {
          for (let i = next++; i < MANY_CRDS; i = next++) {
            await api.expect('POST', CRDS_PATH, definitions[i], [201]);
            createdAt[i] = performance.now();
          }
        }),
      );
    } finally {
      for (const c of creators) c.close();
    }
  })();
  // Served: each definition's list path asked, one at a time on one connection, in the order the
  // definitions were seen Established (the order the controller serves them in; none is served
  // before it is Established), each again RECHECK_MS after a 404: a checker that keeps up with
  // the installs without adding a load of its own.
  const index = new Map(names.map((n, i) => [n, i]));
  let served = 0;
  let notYet = 0;
  const checking = (async () => {
    const api = new ApiClient(server.target);
    try {
      for (let k = 0; served < MANY_CRDS; ) {
        if (performance.now() > deadline) throw new Error(`${MANY_CRDS - served} definitions not served after ${MANY_TIMEOUT_MS} ms`);
        const name = watch.order[k];
        if (name === undefined) {
          await sleep(2);
          continue;
        }
        const i = index.get(name);
        if (i === undefined) {
          k++;
          continue;
        }
        const res = await api.request('GET', `/apis/${manyGroup(i)}/v1/${manyPlural(i)}`);
        if (res.status === 200) {
          servedAt[i] = performance.now();
          served++;
          k++;
        } else {
          notYet++;
          await sleep(RECHECK_MS);
        }
      }
    } finally {
      api.close();
    }
  })();
  try {
    await creating;
    const allCreated = Math.max(...createdAt) - t0;
    await watch.all(names, Math.max(1, deadline - performance.now()));
    const allEstablished = Math.max(...names.map((n) => watch.established.get(n)!)) - t0;
    await checking;
    const allServed = Math.max(...servedAt) - t0;
    const stats1 = await server.stats();
    const cpuMs = (stats1.cpuUs - cpu0) / 1000;
    let rpcs = '';
    if (etcdEndpoint && rpcs0) {
      const rpcs1 = await etcdRpcCounts(etcdEndpoint);
      const per = [...rpcs1]
        .map(([method, n]) => [method, (n - (rpcs0.get(method) ?? 0)) / MANY_CRDS] as const)
        .filter(([, n]) => n >= 0.01)
        .sort((a, b) => b[1] - a[1]);
      rpcs = `; etcd RPCs per definition ${per.map(([m, n]) => `${m} ${n.toFixed(2)}`).join(', ')}`;
    }
    profiler?.windows.push({
      title: `Profile of ${MANY_CRDS.toLocaleString('en-US')} definitions created, Established and served (${ctx.options.store}, from the first create to the last list path's 200)`,
      startUs: stats0.hrtimeUs,
      endUs: stats1.hrtimeUs,
      line: `served in ${(allServed / 1000).toFixed(2)} s, server CPU ${(cpuMs / 1000).toFixed(2)} s while profiled (the profiler adds some)`,
    });
    // Discovery must list every one of them (routing and discovery read one index).
    const reader = new ApiClient(server.target);
    const agg = await reader.request('GET', '/apis', undefined, { accept: AGGREGATED }).finally(() => reader.close());
    const missing = definitions.filter((d) => !aggregatedLists(agg.body, d.spec.group, d.spec.names.plural)).length;
    await sleep(1000);
    const heap1 = await server.gc();
    ctx.log(`14. ${MANY_CRDS} definitions served in ${(allServed / 1000).toFixed(2)} s; discovery and OpenAPI`);

    ctx.rows.push({
      scenario: 14,
      name: `${MANY_CRDS.toLocaleString('en-US')} definitions created by ${CRD_CREATORS} clients (${MANY_GROUPS} groups of ${MANY_CRDS / MANY_GROUPS}, a 20-property schema each): all Established, all served`,
      keelson: `${(allEstablished / 1000).toFixed(2)} s Established; ${(allServed / 1000).toFixed(2)} s served`,
      reference: '',
      ratio: '',
      cpu: `${micros((cpuMs * 1000) / MANY_CRDS)} per definition`,
      latency: '',
      note: `from the first create sent: creates all answered at ${(allCreated / 1000).toFixed(2)} s; Established seen on one watch; served: every definition's list path answered 200 (asked one at a time in the order they were seen Established, again ${RECHECK_MS} ms after a 404: ${notYet} answers 404 before); server CPU ${(cpuMs / 1000).toFixed(2)} s in all${rpcs}; aggregated discovery afterwards lists ${MANY_CRDS - missing} of ${MANY_CRDS}`,
    });
    ctx.budgets.push({
      budget: `${MANY_CRDS.toLocaleString('en-US')} CRDs all Established and served`,
      target: '< 10 s',
      measured: `Established ${(allEstablished / 1000).toFixed(2)} s, served ${(allServed / 1000).toFixed(2)} s`,
      met: allServed < 10_000 && allEstablished < 10_000,
    });

    const after = new Map<Probe, Timed>();
    for (const p of checks) {
      const start = profiler ? (await server.stats()).hrtimeUs : 0;
      after.set(p, await timeRequests(server.target, p));
      if (profiler) {
        const a = after.get(p)!;
        profiler.windows.push({
          title: `Profile of ${p.name} with ${MANY_CRDS.toLocaleString('en-US')} definitions: the first request and ${LATENCY_REQUESTS} more`,
          startUs: start,
          endUs: (await server.stats()).hrtimeUs,
          line: a.failed ? `answered ${a.failed}` : `first ${ms(a.first * 1000)}, then ${ms(a.median * 1000)} median while profiled`,
        });
      }
    }
    await sleep(500);
    const heap2 = await server.gc();

    // One more definition, as a cluster with 1,000 sees one applied: each document's first
    // request after it (what is kept of the others' parts is reused).
    const extra = crd(manyGroup(0), manyPlural(MANY_CRDS), `Thing${MANY_CRDS}`);
    const writer = new ApiClient(server.target);
    const oneMore = new Map<Probe, Timed>();
    try {
      await writer.expect('POST', CRDS_PATH, extra, [201]);
      await watch.all([extra.metadata.name], 30_000);
      await pollUntil(writer, `/apis/${manyGroup(0)}/v1/${manyPlural(MANY_CRDS)}`, (st) => st === 200, performance.now() + 30_000);
    } finally {
      writer.close();
    }
    for (const p of checks) oneMore.set(p, await timeRequests(server.target, p, p.path, 0));
    const perCrd = (h: { heapUsed: number }) => (h.heapUsed - heap0.heapUsed) / MANY_CRDS;
    const perCrdExternal = (h: { external: number }) => (h.external - heap0.external) / MANY_CRDS;
    ctx.rows.push({
      scenario: 14,
      name: `heap per definition, ${MANY_CRDS.toLocaleString('en-US')} definitions`,
      keelson: bytes(perCrd(heap2)),
      reference: '',
      ratio: '',
      cpu: '',
      latency: '',
      note: `heapUsed after a full GC with them minus before, ÷ ${MANY_CRDS}, after the discovery and OpenAPI documents below were built (${bytes(perCrd(heap1))} before them); external ${bytes(perCrdExternal(heap2))} per definition; heapUsed ${bytes(heap0.heapUsed)} → ${bytes(heap2.heapUsed)}, RSS ${bytes(heap0.rss)} → ${bytes(heap2.rss)}`,
    });
    ctx.budgets.push({ budget: 'heap per CRD', target: '≤ 0.5 MB', measured: bytes(perCrd(heap2)), met: perCrd(heap2) <= 0.5 * 2 ** 20 });

    const timed = (t: Timed) => (t.failed ? `answered ${t.failed}` : `first ${ms(t.first * 1000)}, then ${ms(t.median * 1000)} median`);
    for (const p of checks) {
      const a = after.get(p)!;
      const b = before.get(p)!;
      ctx.rows.push({
        scenario: 14,
        name: `${p.name}, ${MANY_CRDS.toLocaleString('en-US')} definitions`,
        keelson: timed(a),
        reference: `${timed(b)} without them${p.path.includes(group0) ? ' (apps/v1)' : ''}`,
        ratio: ratio(a.median, b.median),
        cpu: '',
        latency: `highest of ${LATENCY_REQUESTS} after the first: ${ms(a.highest * 1000)}; ${ms(b.highest * 1000)}`,
        note: `response ${bytes(a.bytes)} / ${bytes(b.bytes)}${p.gzip ? ' (gzipped)' : ''}; one client, one request at a time; the first is the first since the served types last changed; the first after one more definition (the ${(MANY_CRDS + 1).toLocaleString('en-US')}st): ${oneMore.get(p)!.failed ? `answered ${oneMore.get(p)!.failed}` : ms(oneMore.get(p)!.first * 1000)}`,
      });
    }
    const worst = Math.max(...checks.map((p) => (after.get(p)!.failed ? Infinity : Math.max(after.get(p)!.first, after.get(p)!.median))));
    ctx.budgets.push({
      budget: `GET /apis (aggregated, legacy), /openapi/v2, /openapi/v3 with ${MANY_CRDS.toLocaleString('en-US')} CRDs`,
      target: '< 50 ms each',
      measured: `first, then median, then the first after a ${(MANY_CRDS + 1).toLocaleString('en-US')}st: ${checks
        .map((p) => {
          const a = after.get(p)!;
          const o = oneMore.get(p)!;
          return `${p.short} ${a.failed ? `answered ${a.failed}` : `${ms(a.first * 1000)}, ${ms(a.median * 1000)}`}, ${o.failed ? `answered ${o.failed}` : ms(o.first * 1000)}`;
        })
        .join('; ')}`,
      met: worst < 50,
    });
  } finally {
    watch.close();
    await Promise.allSettled([creating, checking]);
  }
}
