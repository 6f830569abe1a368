/**
 * Scenario 1: create throughput. ReplicaSets created over HTTPS by 1, 16 and 64 keep-alive
 * clients, side by side with the store's own limit at the same number in flight from one Node
 * process: raw etcd3 puts of the bytes Keelson stores, and direct creates on an embedded store
 * (at 64 clients also etcd3's guarded creates, and the same through Keelson's etcd store).
 * A third cell is the floor: the bare node:https server creating through the same store with
 * the least work a create needs (bare-server.ts), so the gap splits into Keelson's own part
 * and what Node, TLS and the store client cost.
 */
import { createCore } from '../../../src/core';
import type { GatewayRequest } from '../../../src/gateway';
import { ServerMetrics } from '../../../src/metrics';
import { createNaming } from '../../../src/naming';
import { type StoreOptions, createStore } from '../../../src/store';
import { gatewayOverCore } from '../core-gateway';
import { ApiClient } from '../api';
import { type Context, learnTemplate, storedBytes } from '../context';
import { createBodyTemplate, replicaSet, replicaSetsPath } from '../fixtures';
import { type Cell, type Sample, cpuPerOp, etcdCpuPerOp, etcdRpcsPerOp, perSecond, sideBySide } from '../measure';
import { FLOOR_CREATE_PATH, type BareServer, type KeelsonServer, startBare, startKeelson } from '../processes';
import { micros, ms, rate, ratio } from '../report';
import { cpuPerCall } from './authentication';
import { nullResponse } from './operations';

export const CLIENTS = [1, 16, 64];
const NAMESPACE = 'bench-create';

let runs = 0;

function keelsonCreates(ctx: Context, server: KeelsonServer, clients: number, etcd?: { pid?: number; endpoint: string }): Cell {
  const body = createBodyTemplate(NAMESPACE);
  return {
    worker: ctx.worker,
    open: { kind: 'https', target: server.target, connections: clients },
    spec: () => ({ op: 'request', method: 'POST', paths: [replicaSetsPath(NAMESPACE)], body, namePrefix: `c${clients}-r${++runs}`, expect: 201 }),
    serverCpu: async () => (await server.stats()).cpuUs,
    etcdPid: etcd?.pid,
    etcdEndpoint: etcd?.endpoint,
  };
}

/** Creates at the floor: the same bodies POSTed to the bare server, which writes them to its store. */
function floorCreates(ctx: Context, bare: BareServer, clients: number, etcd?: { pid?: number; endpoint: string }): Cell {
  const body = createBodyTemplate(NAMESPACE);
  return {
    worker: ctx.worker,
    open: { kind: 'https', target: bare.target, connections: clients },
    spec: () => ({ op: 'request', method: 'POST', paths: [`${FLOOR_CREATE_PATH}${NAMESPACE}`], body, namePrefix: `f${clients}-r${++runs}`, expect: 201 }),
    serverCpu: async () => (await bare.stats()).cpuUs,
    etcdPid: etcd?.pid,
    etcdEndpoint: etcd?.endpoint,
  };
}

async function startFloor(ctx: Context, server: KeelsonServer, template: Record<string, unknown>, store: StoreOptions): Promise<BareServer> {
  const bare = await startBare(ctx.build, server.dataDir, server.target.tls);
  await bare.floorCreates(store, template);
  return bare;
}

function floorRow(ctx: Context, backend: string, clients: number, f: Sample, reference: Sample, referenceName: string, keelson: Sample): void {
  ctx.rows.push({
    scenario: 1,
    name: `floor: bare node:https create (parse, stamp, one store create, answer), ${backend}, ${clients} client${clients > 1 ? 's' : ''}`,
    keelson: rate(perSecond(f)),
    reference: `${rate(perSecond(reference))} ${referenceName}`,
    ratio: ratio(perSecond(f), perSecond(reference)),
    cpu: `${micros(cpuPerOp(f))} / ${micros(cpuPerOp(reference))}`,
    latency: `${latency(f)}; ${latency(reference)}`,
    note: `Keelson at ${ratio(perSecond(keelson), perSecond(f))} of the floor${f.etcdRpcs ? `; etcd RPCs/op ${etcdRpcsPerOp(f)}` : ''}${failures(f)}`,
  });
}

/** Clients at which the floor is measured again, slowed to Keelson's rate. */
const SLOWED_FLOOR_CLIENTS = 64;

/**
 * The floor again, a busy-wait in each create making up the CPU Keelson spends beyond it: at
 * Keelson's rate, its CPU beyond the busy-wait is what Node, TLS, the kernel and the store cost
 * a create there, and Keelson's CPU less that is Keelson's own work.
 */
async function slowedFloorRow(
  ctx: Context,
  backend: string,
  bare: BareServer,
  clients: number,
  keelson: Sample,
  floor: Sample,
  etcd?: { pid?: number; endpoint: string },
): Promise<void> {
  const spinUs = Math.max(0, cpuPerOp(keelson) - cpuPerOp(floor));
  await bare.spin(spinUs);
  let slowed: Sample;
  try {
    [slowed] = await sideBySide([floorCreates(ctx, bare, clients, etcd)], ctx.timing);
  } finally {
    await bare.spin(0);
  }
  const around = cpuPerOp(slowed) - spinUs;
  ctx.rows.push({
    scenario: 1,
    name: `floor slowed to Keelson's rate (${micros(spinUs)} µs busy-wait per create), ${backend}, ${clients} clients`,
    keelson: rate(perSecond(slowed)),
    reference: `${rate(perSecond(keelson))} Keelson creates`,
    ratio: ratio(perSecond(slowed), perSecond(keelson)),
    cpu: `${micros(cpuPerOp(slowed))} / ${micros(cpuPerOp(keelson))}`,
    latency: `${latency(slowed)}; ${latency(keelson)}`,
    note: `at this rate Node, TLS, the kernel and the store cost ${micros(around)} µs per create (${micros(cpuPerOp(floor))} at the floor's own rate), so Keelson's own work is ${micros(cpuPerOp(keelson) - around)} µs of its ${micros(cpuPerOp(keelson))}${failures(slowed)}`,
  });
}

/** How many cores a process was busy on average over the cell, given its CPU time there. */
function cores(s: Sample, cpuUs: number | undefined): string {
  return cpuUs === undefined || s.elapsedMs <= 0 ? '-' : (cpuUs / (s.elapsedMs * 1000)).toFixed(2);
}

/** A 64-client reference beside the raw puts: guarded creates with no API server in front. */
function storeReferenceRow(ctx: Context, name: string, s: Sample, raw: Sample, keelson: Sample, note: string): void {
  ctx.rows.push({
    scenario: 1,
    name,
    keelson: rate(perSecond(s)),
    reference: `${rate(perSecond(raw))} raw etcd3 puts`,
    ratio: ratio(perSecond(s), perSecond(raw)),
    cpu: `${micros(cpuPerOp(s))} / ${micros(cpuPerOp(raw))}`,
    latency: `${latency(s)}; ${latency(raw)}`,
    note: `${note}; etcd CPU µs/op ${micros(etcdCpuPerOp(s))} / ${micros(etcdCpuPerOp(raw))}; Keelson over HTTPS at ${ratio(perSecond(keelson), perSecond(s))} of these; etcd RPCs/op ${etcdRpcsPerOp(s)}${failures(s)}`,
  });
}

function latency(s: Sample): string {
  return `${ms(s.latency.percentile(50))} / ${ms(s.latency.percentile(99))}`;
}

function failures(s: Sample): string {
  const bad = Object.entries(s.outcomes).filter(([label]) => label !== '201');
  return bad.length ? ` failures: ${bad.map(([l, n]) => `${l}×${n}`).join(', ')}` : '';
}

export interface CreateResults {
  /** ops/s by store and clients, for the budget checks. */
  keelson: Record<'etcd' | 'embedded', Map<number, number>>;
  rawEtcd: Map<number, number>;
  embeddedDirect: Map<number, number>;
  /** The bare server's creates through the same store (the floor), by store and clients. */
  floor: Record<'etcd' | 'embedded', Map<number, number>>;
}

export async function runCreate(ctx: Context): Promise<CreateResults> {
  const results: CreateResults = {
    keelson: { etcd: new Map(), embedded: new Map() },
    rawEtcd: new Map(),
    embeddedDirect: new Map(),
    floor: { etcd: new Map(), embedded: new Map() },
  };

  // etcd: Keelson over HTTPS vs raw etcd3 puts into the same etcd.
  {
    const etcd = await ctx.etcd();
    const server = await startKeelson(ctx.build, { store: { kind: 'etcd', endpoint: etcd.endpoint }, dataDir: await ctx.tmpDir('create-etcd') });
    const api = new ApiClient(server.target);
    let bare: BareServer | undefined;
    try {
      const template = await learnTemplate(ctx, api, NAMESPACE);
      const value = storedBytes(template);
      bare = await startFloor(ctx, server, template, { kind: 'etcd', endpoints: [etcd.endpoint] });
      await server.settle();
      for (const clients of CLIENTS) {
        ctx.log(`1. create, etcd, ${clients} clients`);
        const raw: Cell = {
          worker: ctx.worker,
          open: { kind: 'etcd', endpoint: etcd.endpoint },
          spec: () => ({ op: 'put', concurrency: clients, value, keyPrefix: `/bench-raw/c${clients}-r${++runs}/` }),
          etcdPid: etcd.pid,
          etcdEndpoint: etcd.endpoint,
        };
        // At the top client count also etcd3's guarded creates: what the create's transaction
        // costs etcd beyond a put, apart from any API server.
        // And the same guarded creates through Keelson's own etcd client (its Store called
        // directly), outside /registry so that the server's watch does not see them: what etcd
        // can take from a leaner client than etcd3's.
        const references: Cell[] =
          clients === SLOWED_FLOOR_CLIENTS
            ? [
                { ...raw, spec: () => ({ op: 'create', concurrency: clients, value, keyPrefix: `/bench-raw/c${clients}-r${++runs}/` }) },
                {
                  ...raw,
                  open: { kind: 'etcd-store', endpoint: etcd.endpoint },
                  spec: () => ({ op: 'create', concurrency: clients, value, keyPrefix: `/bench-store/c${clients}-r${++runs}/` }),
                },
              ]
            : [];
        const [k, r, f, g, d] = await sideBySide(
          [keelsonCreates(ctx, server, clients, etcd), raw, floorCreates(ctx, bare, clients, etcd), ...references],
          ctx.timing,
        );
        results.keelson.etcd.set(clients, perSecond(k));
        results.rawEtcd.set(clients, perSecond(r));
        results.floor.etcd.set(clients, perSecond(f));
        ctx.rows.push({
          scenario: 1,
          name: `create ReplicaSet over HTTPS, etcd, ${clients} client${clients > 1 ? 's' : ''}`,
          keelson: rate(perSecond(k)),
          reference: `${rate(perSecond(r))} raw etcd3 puts (${value.length} B)`,
          ratio: ratio(perSecond(k), perSecond(r)),
          cpu: `${micros(cpuPerOp(k))} / ${micros(cpuPerOp(r))}`,
          latency: `${latency(k)}; ${latency(r)}`,
          note: `etcd RPCs/op ${etcdRpcsPerOp(k)} / ${etcdRpcsPerOp(r)}; etcd CPU µs/op ${micros(etcdCpuPerOp(k))} / ${micros(etcdCpuPerOp(r))}; ref CPU is the etcd3 client process; cores busy: server ${cores(k, k.serverCpuUs)} / client ${cores(r, r.serverCpuUs)}, etcd ${cores(k, k.etcdCpuUs)} / ${cores(r, r.etcdCpuUs)}, HTTPS load generator ${cores(k, k.generatorCpuUs)}${failures(k)}`,
        });
        floorRow(ctx, 'etcd', clients, f, r, 'raw etcd3 puts', k);
        if (g && d) {
          const name = `raw etcd3 guarded creates (txn: put if create revision 0, as an API server's create), etcd, ${clients} clients`;
          storeReferenceRow(
            ctx,
            name,
            g,
            r,
            k,
            `no API server; CPU is the etcd3 client process, busy ${cores(g, g.serverCpuUs)} / ${cores(r, r.serverCpuUs)} cores`,
          );
          const direct = `Keelson's etcd store called directly: the same guarded creates through its own etcd client, no API server, etcd, ${clients} clients`;
          storeReferenceRow(ctx, direct, d, r, k, `client CPU is the calling process, busy ${cores(d, d.serverCpuUs)} / ${cores(r, r.serverCpuUs)} cores`);
        }
        if (clients === SLOWED_FLOOR_CLIENTS) await slowedFloorRow(ctx, 'etcd', bare, clients, k, f, etcd);
      }
    } finally {
      api.close();
      await bare?.stop();
      await server.stop();
      // Its tens of thousands of objects are of no use to later scenarios: stop it now rather
      // than let it idle beside them.
      await etcd.stop();
    }
  }

  // Embedded: Keelson over HTTPS vs direct creates on another embedded store (SQLite allows one owner).
  {
    const server = await startKeelson(ctx.build, { store: { kind: 'embedded' }, dataDir: await ctx.tmpDir('create-embedded') });
    const api = new ApiClient(server.target);
    const directDir = await ctx.tmpDir('create-direct');
    let bare: BareServer | undefined;
    try {
      const template = await learnTemplate(ctx, api, NAMESPACE);
      const value = storedBytes(template);
      bare = await startFloor(ctx, server, template, { kind: 'embedded', dataDir: await ctx.tmpDir('create-floor') });
      await server.settle();
      for (const clients of CLIENTS) {
        ctx.log(`1. create, embedded, ${clients} clients`);
        const direct: Cell = {
          worker: ctx.worker,
          open: { kind: 'embedded', dataDir: directDir },
          spec: () => ({ op: 'create', concurrency: clients, value, keyPrefix: `/registry/bench-direct/c${clients}-r${++runs}/` }),
        };
        const [k, d, f] = await sideBySide([keelsonCreates(ctx, server, clients), direct, floorCreates(ctx, bare, clients)], ctx.timing);
        results.keelson.embedded.set(clients, perSecond(k));
        results.embeddedDirect.set(clients, perSecond(d));
        results.floor.embedded.set(clients, perSecond(f));
        ctx.rows.push({
          scenario: 1,
          name: `create ReplicaSet over HTTPS, embedded, ${clients} client${clients > 1 ? 's' : ''}`,
          keelson: rate(perSecond(k)),
          reference: `${rate(perSecond(d))} direct embedded-store creates`,
          ratio: ratio(perSecond(k), perSecond(d)),
          cpu: `${micros(cpuPerOp(k))} / ${micros(cpuPerOp(d))}`,
          latency: `${latency(k)}; ${latency(d)}`,
          note: `ref CPU is the process calling the store${failures(k)}`,
        });
        floorRow(ctx, 'embedded', clients, f, d, 'direct embedded-store creates', k);
        if (clients === SLOWED_FLOOR_CLIENTS) await slowedFloorRow(ctx, 'embedded', bare, clients, k, f);
      }
    } finally {
      api.close();
      await bare?.stop();
      await server.stop();
    }
  }

  await inProcessCreates(ctx);

  const top = CLIENTS[CLIENTS.length - 1];
  const rawTop = results.rawEtcd.get(top) ?? NaN;
  const directTop = results.embeddedDirect.get(top) ?? NaN;
  ctx.rows.push({
    scenario: 1,
    name: `embedded store creates vs raw etcd3 puts, ${top} in flight`,
    keelson: rate(directTop),
    reference: `${rate(rawTop)} raw etcd3 puts`,
    ratio: ratio(directTop, rawTop),
    cpu: '',
    latency: '',
    note: `store level, from the rows above; over HTTPS: ${ratio(results.keelson.embedded.get(top) ?? NaN, rawTop)}`,
  });
  const etcdTop = results.keelson.etcd.get(top) ?? NaN;
  const etcdFloor = results.floor.etcd.get(top) ?? NaN;
  ctx.budgets.push({
    budget: `create over HTTPS vs raw etcd3 puts, ${top} in flight`,
    target: '≥ 0.6×',
    measured: `${(etcdTop / rawTop).toFixed(3)}× (the bare floor: ${(etcdFloor / rawTop).toFixed(3)}×)`,
    met: etcdTop / rawTop >= 0.6,
    floor: { reaches: etcdFloor / rawTop >= 0.6, share: etcdTop / etcdFloor },
  });
  const embeddedTop = results.keelson.embedded.get(top) ?? NaN;
  const embeddedFloor = results.floor.embedded.get(top) ?? NaN;
  ctx.budgets.push({
    budget: `create over HTTPS on the embedded store vs direct embedded-store creates, ${top} in flight`,
    target: '≥ 0.3×',
    measured: `${(embeddedTop / directTop).toFixed(3)}× (the bare floor, Node, TLS and the store with no Keelson code: ${(embeddedFloor / directTop).toFixed(3)}×)`,
    met: embeddedTop / directTop >= 0.3,
    floor: { reaches: embeddedFloor / directTop >= 0.3, share: embeddedTop / embeddedFloor },
  });
  ctx.budgets.push({
    budget: `create over HTTPS on the embedded store vs on etcd, ${top} in flight`,
    target: '> 1× (faster)',
    measured: `${(embeddedTop / etcdTop).toFixed(2)}×`,
    met: embeddedTop / etcdTop > 1,
  });
  return results;
}

/**
 * Where a create's CPU goes without sockets, in this process on the embedded store (a file, as
 * the server keeps it), 64 in flight: `core.create` alone (decode done, the registry's work and
 * the store write, the watch cache taking the object), then the same ReplicaSet POSTed through
 * the gateway's handler with the server's default steps (limits, metrics) and a response that
 * keeps nothing. The HTTPS rows above add Node's HTTP, TLS and the kernel to the second.
 */
async function inProcessCreates(ctx: Context): Promise<void> {
  ctx.log('1. create in process: core and socket-free gateway');
  const naming = createNaming('kubernetes');
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir: await ctx.tmpDir('create-in-process') }), naming, compactionIntervalMs: 0 });
  try {
    await core.ready();
    const admin = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'bench' };
    await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: NAMESPACE } }, {}, admin);
    const gateway = gatewayOverCore(core, naming, { limits: { maxReadOnly: 400, maxMutating: 200, requestTimeoutMs: 60_000 }, metrics: new ServerMetrics() });
    const object = replicaSet('in-process', NAMESPACE);
    const meta = object.metadata as { name: string };
    const target = { group: 'apps', version: 'v1', resource: 'replicasets', namespace: NAMESPACE };
    let n = 0;
    const viaCore = async () => {
      meta.name = `core-${n++}`;
      await core.create(target, JSON.parse(JSON.stringify(object)), {}, admin);
    };
    const viaGateway = async () => {
      meta.name = `gateway-${n++}`;
      await createThrough(gateway, replicaSetsPath(NAMESPACE), Buffer.from(JSON.stringify(object)));
    };
    // 64 at a time, as the HTTPS rows' clients: the store commits the writes of one event-loop
    // turn together, which one create at a time would not let it do.
    const inFlight = CLIENTS[CLIENTS.length - 1];
    const batch = (one: () => Promise<void>) => () => Promise.all(Array.from({ length: inFlight }, one));
    const ms = ctx.options.quick ? 500 : 2000;
    // Twice round, interleaved, keeping each one's better run: the machine is shared.
    let coreUs = Infinity;
    let gatewayUs = Infinity;
    for (let round = 0; round < 2; round++) {
      coreUs = Math.min(coreUs, (await cpuPerCall(batch(viaCore), ms)) / inFlight);
      gatewayUs = Math.min(gatewayUs, (await cpuPerCall(batch(viaGateway), ms)) / inFlight);
    }
    ctx.rows.push({
      scenario: 1,
      name: 'create in process: core.create of a ReplicaSet (embedded store)',
      keelson: `${micros(coreUs)} µs CPU per create`,
      reference: '(reference)',
      ratio: '1.00×',
      cpu: micros(coreUs),
      latency: '',
      note: 'this process, 64 in flight: the registry (metadata, defaults, managedFields, admission, validation), the store write and the watch cache taking the object',
    });
    ctx.rows.push({
      scenario: 1,
      name: "create in process: the gateway's handler, socket-free (limits and metrics)",
      keelson: `${micros(gatewayUs)} µs CPU per create`,
      reference: `${micros(coreUs)} µs core.create`,
      ratio: `${(gatewayUs / coreUs).toFixed(2)}×`,
      cpu: micros(gatewayUs),
      latency: '',
      note: `+${micros(gatewayUs - coreUs)} µs for the gateway: steps, body decode and field validation, the response encoded (not written)`,
    });
  } finally {
    await core.close();
  }
}

/**
 * A create through an in-process gateway, socket-free: `body` (JSON) POSTed to `path` as the
 * bench's admin (a verified client certificate in system:masters); throws unless answered 201.
 */
export async function createThrough(gateway: ReturnType<typeof gatewayOverCore>, path: string, body: Buffer): Promise<void> {
  const request: GatewayRequest = {
    method: 'POST',
    path,
    query: new URLSearchParams(),
    headers: { accept: 'application/json', 'content-type': 'application/json', 'user-agent': 'bench' },
    peerCertificate: { verified: true, commonName: 'admin', organizations: ['system:masters'] },
    remoteAddress: '127.0.0.1',
    signal: new AbortController().signal,
    readBody: async () => body,
  };
  const response = nullResponse();
  await gateway.handle(request, response);
  if (response.statusCode !== 201) throw new Error(`in-process create answered ${response.statusCode}`);
}
