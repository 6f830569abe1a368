/**
 * The worker thread of etcd-client-thread.ts: one EtcdClient, driven by the main thread's
 * batches of calls and watches, answering with one batch per event-loop turn.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EtcdClient, type EtcdClientOptions, type WatchStream } from './etcd-client';
import { type FromEtcdThread, type ToEtcdThread, crossingError } from './etcd-client-thread';

const port = parentPort!;
const client = new EtcdClient(workerData as EtcdClientOptions);
const watches = new Map<number, WatchStream>();
let outbox: FromEtcdThread[] = [];
let scheduled = false;

function reply(message: FromEtcdThread): void {
  outbox.push(message);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

function flush(): void {
  scheduled = false;
  if (outbox.length === 0) return;
  const batch = outbox;
  outbox = [];
  port.postMessage(batch);
}

function run(message: ToEtcdThread): void {
  if ('call' in message) {
    const { id } = message;
    let answer: Promise<unknown>;
    switch (message.call) {
      case 'txn':
        answer = client.txn(message.request as Parameters<EtcdClient['txn']>[0]);
        break;
      case 'deleteRange':
        answer = client.deleteRange(message.request as Parameters<EtcdClient['deleteRange']>[0]);
        break;
      case 'compact':
        answer = client.compact(message.request as Parameters<EtcdClient['compact']>[0]);
        break;
      case 'status':
        answer = client.status();
        break;
    }
    answer.then(
      (ok) => reply({ id, ok }),
      (err: unknown) => reply({ id, failed: crossingError(err) }),
    );
  } else if ('watch' in message) {
    const { id } = message;
    watches.set(
      id,
      client.watch(message.watch, {
        onResponse: (response) => reply({ id, response }),
        onEnd: (err) => {
          watches.delete(id);
          reply({ id, ended: crossingError(err) });
        },
      }),
    );
  } else if ('cancel' in message) {
    watches.get(message.cancel)?.cancel();
    watches.delete(message.cancel);
  } else {
    // The main thread has failed what was open already; nothing more is sent.
    client.close();
    port.close();
  }
}

port.on('message', (batch: ToEtcdThread[]) => {
  for (const message of batch) run(message);
});
