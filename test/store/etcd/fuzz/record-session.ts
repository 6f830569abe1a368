/**
 * Records `captured-session.bin`: the session's operations (session.ts) one after the other
 * against a fresh etcd, keeping every byte etcd sent on the connection.
 *
 *   node -r @swc-node/register test/store/etcd/fuzz/record-session.ts
 */
import fs from 'node:fs';
import net from 'node:net';
import { EtcdClient } from '../../../../src/store/etcd/client';
import { EtcdStore } from '../../../../src/store/etcd/store';
import { startEtcd } from '../../../support/etcd';
import { CAPTURE_FILE, WATCH_OPERATION, describeOutcome, sessionOperations, type WatchLog } from './session';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const etcd = await startEtcd();
  const received: Buffer[] = [];
  try {
    const client = new EtcdClient({
      endpoints: [etcd.endpoint],
      timeoutMs: 10_000,
      keepaliveMs: 0,
      dial: (endpoint) => {
        const socket = net.connect(Number(endpoint.port), endpoint.hostname);
        // Before the client's own listener: every byte, in order.
        socket.on('data', (chunk: Buffer) => received.push(Buffer.from(chunk)));
        return { socket, connectEvent: 'connect' };
      },
    });
    const store = new EtcdStore({ endpoints: [etcd.endpoint], client });
    const watch: WatchLog = { events: [] };
    const operations = sessionOperations(store, watch);
    for (const [i, operation] of operations.entries()) {
      const outcome = await operation().catch((err: unknown) => err);
      process.stdout.write(`${i}: ${JSON.stringify(describeOutcome(outcome))}\n`);
      if (i === WATCH_OPERATION) await pause(300); // etcd has the watch before the next write
    }
    await pause(500); // the last watch events and anything etcd sends after them
    process.stdout.write(`watch: ${JSON.stringify(describeOutcome(watch))}\n`);
    await store.close();
  } finally {
    await etcd.stop();
  }
  fs.writeFileSync(CAPTURE_FILE, Buffer.concat(received));
  process.stdout.write(`${CAPTURE_FILE}: ${Buffer.concat(received).length} bytes\n`);
}

void main();
