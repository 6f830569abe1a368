/**
 * The gateway's open watches (issue 50): many concurrent watches over real HTTPS leave no
 * listener on anything shared (no MaxListenersExceededWarning), nothing stays registered once
 * they end, and shutdown still ends every one that is open (docs/OPERATIONS.md, "Shutdown").
 */
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { ListOptions, RequestContext, ResourceTarget, WatchStream } from '../../src/core/api';
import { createNaming } from '../../src/naming';
import { OpenWatches, type RunningServer, keelsonVersion, startGateway } from '../../src/gateway';
import { type Pki, ensurePki } from '../../src/server/pki';
import { testDefinitions } from './support/definitions';
import { type ClientTls, httpsStream } from './support/https-client';
import { PushWatch, RecordingCore } from './support/recording-core';
import { eventually } from '../support/eventually';

const WATCHERS = 30;
const naming = createNaming('kubernetes');

/** A fresh stream per watch, each kept to see that it was closed. */
class ManyWatchesCore extends RecordingCore {
  streams: PushWatch[] = [];
  override async watch(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<WatchStream> {
    await super.watch(target, options, ctx);
    const stream = new PushWatch();
    this.streams.push(stream);
    return stream;
  }
}

let dir: string;
let pki: Pki;
let admin: ClientTls;
/**
 * The process node emits its warnings on. Jest hands each test file a copy of `process`, whose
 * 'warning' listeners node never calls; a function of node's own realm sees the real one.
 */
const nodeProcess = new (EventEmitter.constructor as FunctionConstructor)('return process')() as NodeJS.Process;
let leakWarnings: string[];
const onWarning = (warning: Error) => {
  if (warning.name === 'MaxListenersExceededWarning') leakWarnings.push(warning.message);
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-open-watches-'));
  pki = await ensurePki({ dataDir: dir });
  admin = { ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  leakWarnings = [];
  nodeProcess.on('warning', onWarning);
});

afterEach(() => {
  nodeProcess.off('warning', onWarning);
});

describe('open watches over HTTPS', () => {
  let server: RunningServer;
  let core: ManyWatchesCore;
  let openWatches: OpenWatches;
  let base: string;

  beforeEach(async () => {
    core = new ManyWatchesCore();
    openWatches = new OpenWatches();
    server = await startGateway({
      core,
      openWatches,
      resources: testDefinitions(naming),
      naming,
      health: { livez: [], readyz: [], healthz: [] },
      version: keelsonVersion(),
      tls: { cert: pki.servingCert, key: pki.servingKey, clientCa: pki.caCert },
      host: '127.0.0.1',
      port: 0,
    });
    base = `https://127.0.0.1:${server.port}`;
  });

  afterEach(async () => {
    await server.close(1000);
  });

  function openAll() {
    return Array.from({ length: WATCHERS }, (_, i) => httpsStream(`${base}/api/v1/namespaces/ns-${i}/pods?watch=true`, admin));
  }

  it(`${WATCHERS} concurrent watches raise no MaxListenersExceededWarning and leave nothing registered once closed`, async () => {
    const watches = openAll();
    await Promise.all(watches.map((w) => w.opened));
    expect(watches.map((w) => w.status)).toEqual(Array(WATCHERS).fill(200));
    await eventually(() => core.streams.length === WATCHERS, { what: 'every watch reached the core' });
    expect(openWatches.size).toBe(WATCHERS);

    for (const w of watches) w.close();
    await eventually(() => core.streams.every((s) => s.closed) && openWatches.size === 0, { what: 'every watch ended' });
    // process.emitWarning delivers on a later tick.
    await new Promise((r) => setImmediate(r));
    expect(leakWarnings).toEqual([]);
  });

  it('shutdown ends every open watch cleanly and leaves none registered', async () => {
    const watches = openAll();
    await Promise.all(watches.map((w) => w.opened));
    await eventually(() => openWatches.size === WATCHERS, { what: 'every watch is registered' });

    await server.close(1000);
    await eventually(() => watches.every((w) => w.ended), { what: 'every client saw its stream end' });
    expect(core.streams.every((s) => s.closed)).toBe(true);
    expect(openWatches.size).toBe(0);
    expect(leakWarnings).toEqual([]);
  });
});

describe('OpenWatches', () => {
  it('ends what is registered, forgets what unregistered, and ends at once what comes after closeAll', () => {
    const watches = new OpenWatches();
    const ended: string[] = [];
    const unregisterA = watches.add(() => ended.push('a'));
    watches.add(() => ended.push('b'));
    unregisterA();
    expect(watches.size).toBe(1);
    watches.closeAll();
    expect(ended).toEqual(['b']);
    expect(watches.size).toBe(0);
    const unregisterLate = watches.add(() => ended.push('late'));
    expect(ended).toEqual(['b', 'late']);
    expect(watches.size).toBe(0);
    unregisterLate();
  });
});
