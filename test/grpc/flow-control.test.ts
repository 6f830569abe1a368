/**
 * The gRPC door admits through the same priority-and-fairness dispatcher as the HTTPS door: a
 * call is classified like a request, refused with the TooManyRequests Status (and its
 * `retryAfterSeconds`) while its level is full, served once seats are free, and counted as a
 * watcher of its type while a watch lasts.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../../src/clock';
import { createCore, type Core, type RequestContext, type ResourceTarget } from '../../src/core';
import { FlowControl, type FlowRequest } from '../../src/flowcontrol';
import { createGrpcCoreClient, startGrpcCoreServer, type GrpcCoreClient, type GrpcCoreServer } from '../../src/grpc';
import { createNaming } from '../../src/naming';
import type { StatusError } from '../../src/status';
import { createStore } from '../../src/store';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
const configmaps: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const alice: RequestContext = { user: { username: 'alice', groups: ['system:authenticated'] }, warnings: [] };

let dir: string;
let core: Core;
let flowControl: FlowControl;
let server: GrpcCoreServer;
let client: GrpcCoreClient;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-grpc-apf-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  await core.ready();
  // No configuration objects: the mandatory catch-all (Reject) has the server's 2 seats.
  flowControl = new FlowControl({ serverConcurrencyLimit: 2, requestTimeoutMs: 60_000, clock: new ManualClock(), naming: naming });
  server = await startGrpcCoreServer(core, { address: '127.0.0.1:0', authentication: 'trust-caller', flowControl });
  client = createGrpcCoreClient(server.address);
});

afterAll(async () => {
  client.close();
  await server.close();
  flowControl.close();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const held = (user: string): FlowRequest => ({
  user: { username: user, groups: ['system:authenticated'] },
  isResourceRequest: true,
  verb: 'get',
  path: '/api/v1/namespaces/default/configmaps/x',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'configmaps',
  subresource: '',
  namespace: 'default',
  name: 'x',
});

test('a call is refused TooManyRequests while its level is full, and served once a seat is free', async () => {
  // Two requests of another door hold catch-all's two seats.
  const tickets = [flowControl.admit(held('bob')), flowControl.admit(held('bob'))].map((a) => {
    if (a.outcome !== 'execute') throw new Error(`expected a seat, got ${a.outcome}`);
    return a.ticket;
  });
  const refused = await client.list(configmaps, {}, { ...alice, warnings: [] }).then(
    () => undefined,
    (err: StatusError) => err,
  );
  expect(refused?.status).toMatchObject({
    reason: 'TooManyRequests',
    code: 429,
    message: 'Too many requests, please try again later.',
    details: { retryAfterSeconds: 1 },
  });
  flowControl.finish(tickets[0]!);
  const listed = await client.list(configmaps, {}, { ...alice, warnings: [] });
  expect(listed.items).toEqual([]);
  flowControl.finish(tickets[1]!);
  const catchAll = flowControl.priorityLevels().find((l) => l.name === 'catch-all')!;
  expect(catchAll.queues.totals).toMatchObject({ dispatched: 3, rejected: 1 });
  expect(catchAll.queues.totRequestsExecuting).toBe(0);
});

test('a watch gives its seat back once started and counts as a watcher until it ends', async () => {
  const watchers = () => flowControl.watches.count(held('any'));
  const stream = await client.watch(configmaps, {}, { ...alice, warnings: [] });
  const catchAll = flowControl.priorityLevels().find((l) => l.name === 'catch-all')!;
  await eventually(() => catchAll.queues.totRequestsExecuting === 0 && watchers() === 1, { what: 'the watch to start' });
  stream.close();
  await eventually(() => watchers() === 0, { what: 'the watch to end' });
});
