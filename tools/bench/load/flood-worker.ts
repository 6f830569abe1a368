/**
 * The flooding user of the priority-and-fairness flood (`flood.ts`), in a process of its own so
 * that reading its lists (megabytes each, without pause) takes no time from the client whose
 * latency is measured. `start` opens `concurrency` connections, each sending the list again
 * the moment the previous answer ends, 429s included; `stop` ends them and reports the answers
 * by status.
 */
import { HttpsConnection, type Target, requestHead } from '../https-client';
import { serveCalls } from '../ipc';

export interface FloodStart {
  target: Target;
  token: string;
  path: string;
  concurrency: number;
}

export interface FloodCounts {
  byStatus: Record<string, number>;
  /** Connections that failed (reset, refused) and were opened again. */
  transportErrors: number;
  bytes: number;
}

let running = false;
let loops: Promise<void>[] = [];
const counts: FloodCounts = { byStatus: {}, transportErrors: 0, bytes: 0 };

async function loop(args: FloodStart): Promise<void> {
  const head = requestHead('GET', args.path, args.target, { authorization: `Bearer ${args.token}` });
  let conn: HttpsConnection | undefined;
  while (running) {
    try {
      conn ??= await HttpsConnection.connect(args.target);
      const res = await conn.request(head, undefined, { keepBody: false });
      counts.byStatus[res.status] = (counts.byStatus[res.status] ?? 0) + 1;
      counts.bytes += res.bodyBytes;
    } catch {
      counts.transportErrors++;
      conn?.close();
      conn = undefined;
    }
  }
  conn?.close();
}

serveCalls({
  start: (args: FloodStart) => {
    running = true;
    loops = Array.from({ length: args.concurrency }, () => loop(args));
  },
  /** The counts so far, the flood still running. */
  counts: () => counts,
  stop: async () => {
    running = false;
    await Promise.all(loops);
    return counts;
  },
});
