/**
 * The worker thread of etcd-client-thread.ts: one EtcdClient making the calls and watches the
 * main thread sends encoded, and handing back what etcd answers undecoded, one message per
 * event-loop turn.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { ETCD_METHODS, EtcdClient, type EtcdClientOptions, type WatchStream } from './etcd-client';
import { FromThread, Outbox, THREAD_METHODS, ToThread, type ThreadMessage } from './etcd-client-thread';

const port = parentPort!;
const client = new EtcdClient(workerData as EtcdClientOptions);
const watches = new Map<number, WatchStream>();
const outbox = new Outbox();
let scheduled = false;

function later(): void {
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

function flush(): void {
  scheduled = false;
  if (outbox.empty) return;
  const message = outbox.take();
  port.postMessage(message, [message.bytes]);
}

function answer(id: number, bytes: Uint8Array): void {
  outbox.add(FromThread.Answer, id, 0, bytes);
  later();
}

function failed(kind: number, id: number, err: unknown): void {
  outbox.fail(kind, id, err);
  later();
}

port.on('message', ({ entries, bytes }: ThreadMessage) => {
  for (let i = 0; i < entries.length; i += 5) {
    const kind = entries[i]!;
    const id = entries[i + 1]!;
    const request = new Uint8Array(bytes, entries[i + 3]!, entries[i + 4]!);
    switch (kind) {
      case ToThread.Call: {
        const method = ETCD_METHODS[THREAD_METHODS[entries[i + 2]!]!];
        client.rawCall(method.path, request).then(
          (response) => answer(id, response),
          (err: unknown) => failed(FromThread.Failed, id, err),
        );
        break;
      }
      case ToThread.Watch:
        watches.set(
          id,
          client.rawWatch(request, {
            onMessage: (message) => {
              outbox.add(FromThread.WatchMessage, id, 0, message);
              later();
            },
            onEnd: (err) => {
              watches.delete(id);
              failed(FromThread.WatchEnded, id, err);
            },
          }),
        );
        break;
      case ToThread.Cancel:
        watches.get(id)?.cancel();
        watches.delete(id);
        break;
      case ToThread.Close:
        // The main thread has failed what was open already; nothing more is sent.
        client.close();
        port.close();
        break;
    }
  }
});
