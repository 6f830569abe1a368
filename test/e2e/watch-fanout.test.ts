/**
 * Fan-out over HTTPS against the real server process: 1,000 concurrent watches each receive
 * every write, in order (issue 4's fan-out figure). It also prints delivery latency (from
 * issuing the write to each watcher's line) and the server's RSS growth per open watch, as a
 * rough figure: client and server share this machine.
 */
import { execFileSync } from 'node:child_process';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';

const WATCHERS = 1000;
const WRITES = 10;

const rssKb = (pid: number): number =>
  Number(
    execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
      .toString()
      .trim(),
  );

/** The server child's pid, found by its unique data dir. */
function serverPid(dataDir: string): number {
  const line = execFileSync('ps', ['-eo', 'pid=,args='])
    .toString()
    .split('\n')
    .find((l) => l.includes(dataDir) && l.includes('main.ts'));
  return line ? Number(line.trim().split(/\s+/)[0]) : 0;
}

interface Round {
  index: number;
  t0: number;
  pending: number;
  done(): void;
}

describe('watch fan-out over HTTPS', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it(`delivers every write to ${WATCHERS} concurrent watchers, in order`, async () => {
    const post = (name: string) =>
      httpsRequest(`${server.url}/api/v1/namespaces/default/configmaps`, server.admin, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name }, data: { payload: 'x'.repeat(512) } }),
      });
    const seed = JSON.parse((await post('seed')).body) as { metadata: { resourceVersion: string } };
    const pid = serverPid(server.dataDir);
    const before = pid ? rssKb(pid) : 0;

    const agent = new https.Agent({ keepAlive: true, maxSockets: Infinity, ca: server.admin.ca, cert: server.admin.cert, key: server.admin.key });
    const received: string[][] = Array.from({ length: WATCHERS }, () => []);
    const latencies: number[] = [];
    let round: Round | undefined;
    const requests: ClientRequest[] = [];
    await Promise.all(
      Array.from(
        { length: WATCHERS },
        (_, i) =>
          new Promise<void>((resolve, reject) => {
            const req = https.request(
              `${server.url}/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${seed.metadata.resourceVersion}`,
              { agent },
              (res) => {
                let buffered = '';
                res.setEncoding('utf8');
                res.on('data', (chunk: string) => {
                  buffered += chunk;
                  let nl: number;
                  while ((nl = buffered.indexOf('\n')) >= 0) {
                    const event = JSON.parse(buffered.slice(0, nl)) as { type: string; object: { metadata: { name: string } } };
                    buffered = buffered.slice(nl + 1);
                    received[i]!.push(`${event.type} ${event.object.metadata.name}`);
                    if (round && received[i]!.length === round.index + 1) {
                      latencies.push(performance.now() - round.t0);
                      if (--round.pending === 0) round.done();
                    }
                  }
                });
                resolve();
              },
            );
            req.on('error', reject);
            req.end();
            requests.push(req);
          }),
      ),
    );
    const after = pid ? rssKb(pid) : 0;

    try {
      for (let w = 0; w < WRITES; w++) {
        const all = new Promise<void>((resolve) => {
          round = { index: w, t0: performance.now(), pending: WATCHERS, done: resolve };
        });
        expect((await post(`o${w}`)).status).toBe(201);
        await all;
      }
    } finally {
      for (const req of requests) req.destroy();
      agent.destroy();
    }
    const expected = Array.from({ length: WRITES }, (_, w) => `ADDED o${w}`);
    for (const events of received) expect(events).toEqual(expected);
    latencies.sort((x, y) => x - y);
    const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
    const perWatcher = pid ? `, server RSS +${((after - before) / WATCHERS).toFixed(0)} KB per watch` : '';
    process.stdout.write(`watch fan-out: ${WATCHERS} watchers x ${WRITES} writes, delivery p50 ${p(0.5)} ms, p99 ${p(0.99)} ms${perWatcher}\n`);
  });
});
