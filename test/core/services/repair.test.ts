/**
 * The repair of Services' allocations, as upstream's cluster IP and node port repair controllers:
 * through a real core on the embedded store and a ManualClock, a round every 3 minutes marks what
 * the Services hold and frees an address held by none after three rounds; a round whose bitmap
 * changed after it was read gives up rather than mark an address released meanwhile.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Core, type RequestContext, type Service, createCore } from '../../../src/core';
import { builtinResources } from '../../../src/core/resources';
import { ServiceAllocation } from '../../../src/core/services';
import { ManualClock } from '../../../src/clock';
import { createNaming } from '../../../src/naming';
import { createStore, type Store } from '../../../src/store';
import { eventually } from '../../support/eventually';

const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const naming = createNaming('kubernetes');
const RANGE = '10.96.0.0/28';
const PORTS = '30000-30009';
const THREE_MINUTES = 3 * 60_000;

let dir: string;
let store: Store;
let core: Core;
let clock: ManualClock;
/** The same bitmaps, reached as another server on the store would. */
let other: ServiceAllocation;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-svc-repair-'));
  store = createStore({ kind: 'embedded', dataDir: dir });
  clock = new ManualClock();
  core = createCore({
    store,
    naming,
    clock,
    compactionIntervalMs: 0,
    resources: builtinResources(naming),
    services: { clusterIPRange: RANGE, nodePortRange: PORTS, loopback: { host: '127.0.0.1', port: 6443 } },
  });
  await core.ready();
  other = new ServiceAllocation(store, { clusterIPRange: RANGE, nodePortRange: PORTS });
});

afterAll(async () => {
  await core.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('every 3 minutes marks what the Services hold, and frees a leaked address after the third round', async () => {
  const made = await core.create(
    { group: '', version: 'v1', resource: 'services', namespace: 'default' },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: 30005 }] } },
    {},
    ADMIN,
  );
  const web = other.cidr.offsetOf((made.object as Service).spec!.clusterIP!)!;
  const leaked = [...Array(other.cidr.size).keys()].find((o) => o !== web && o !== 0)!;
  expect(await other.ips.allocate(leaked)).toBe(true);
  expect(await other.nodePorts.allocate(7)).toBe(true);

  for (const round of [1, 2, 3]) {
    // A lost mark (as if written by a server that crashed) shows the round ran once it is back.
    await other.ips.release([web]);
    await other.nodePorts.release([5]);
    clock.advance(THREE_MINUTES);
    await eventually(async () => (await other.ips.taken()).has(web) && (await other.nodePorts.taken()).has(5), { what: `repair round ${round}` });
    // Held by no Service: kept for two rounds (an allocation whose Service is not stored yet), freed by the third.
    expect((await other.ips.taken()).has(leaked)).toBe(round < 3);
    expect((await other.nodePorts.taken()).has(7)).toBe(round < 3);
  }
  // The kubernetes Service's address is held throughout.
  expect((await other.ips.taken()).has(0)).toBe(true);
});

it('gives up a round whose bitmap changed after it was read, rather than mark an address released meanwhile', async () => {
  const repairer = new ServiceAllocation(store, { clusterIPRange: RANGE, nodePortRange: PORTS });
  const listed = (await core.list({ group: '', version: 'v1', resource: 'services' }, {}, ADMIN)).items as Service[];
  const web = listed.find((s) => s.metadata?.name === 'web')!;
  const offset = repairer.cidr.offsetOf(web.spec!.clusterIP!)!;
  // A lost mark gives the round something to write; the Service is deleted (its address
  // released) between the round's read of the bitmap and its list.
  await repairer.ips.release([0]);
  const done = await repairer.repair(async () => {
    await core.delete({ group: '', version: 'v1', resource: 'services', namespace: 'default', name: 'web' }, {}, ADMIN);
    return listed;
  });
  expect(done).toBe(false);
  expect((await repairer.ips.taken()).has(offset)).toBe(false);
  expect((await repairer.nodePorts.taken()).has(5)).toBe(false);
  expect((await repairer.ips.taken()).has(0)).toBe(false);
  // The next round, on a bitmap that stays still, agrees with the Services.
  expect(await repairer.repair(async () => (await core.list({ group: '', version: 'v1', resource: 'services' }, {}, ADMIN)).items as Service[])).toBe(true);
  expect([...(await repairer.ips.taken())]).toEqual([0]);
});
