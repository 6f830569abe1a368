/**
 * startTogether: the requests of one turn start together at its end, in the order they arrived;
 * one that throws does not keep the others from starting; and over real sockets every request is
 * answered with its whole body read, though its listener starts after the body arrived.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTogether } from '../../src/gateway/https-server';
import { bulkWriting } from '../../src/util/bulk-writes';

/** A request and response as far as a listener that only records them needs. */
function pair(name: string): [IncomingMessage, ServerResponse] {
  return [{ url: `/${name}` } as IncomingMessage, {} as ServerResponse];
}

/** A startTogether listener that records the requests it starts, with the turns it asked for run by hand. */
function recording() {
  const started: string[] = [];
  const turns: (() => void)[] = [];
  const listener = startTogether(
    (req) => started.push(req.url!),
    (start) => turns.push(start),
  );
  return { started, turns, listener };
}

describe('startTogether', () => {
  it('starts the requests of a turn when the turn ends, in the order they arrived', () => {
    const { started, turns, listener } = recording();

    listener(...pair('a'));
    listener(...pair('b'));
    listener(...pair('c'));
    expect(started).toEqual([]);
    expect(turns).toHaveLength(1);

    turns[0]!();
    expect(started).toEqual(['/a', '/b', '/c']);

    // A request arriving after the batch started waits for a turn of its own.
    listener(...pair('d'));
    expect(turns).toHaveLength(2);
    expect(started).toEqual(['/a', '/b', '/c']);
    turns[1]!();
    expect(started).toEqual(['/a', '/b', '/c', '/d']);
  });

  it('starts a request at once while bulk writes are pending (a turn ends with a slice of them), and batches again after', () => {
    const { started, turns, listener } = recording();
    bulkWriting(true);
    try {
      listener(...pair('a'));
      listener(...pair('b'));
      expect(started).toEqual(['/a', '/b']);
      expect(turns).toHaveLength(0);
    } finally {
      bulkWriting(false);
    }
    listener(...pair('c'));
    expect(started).toEqual(['/a', '/b']);
    turns[0]!();
    expect(started).toEqual(['/a', '/b', '/c']);
  });

  it('a request arriving while bulk writes start waits behind a batch already gathered, in order', () => {
    const { started, turns, listener } = recording();
    listener(...pair('a'));
    bulkWriting(true);
    try {
      listener(...pair('b'));
      expect(started).toEqual([]);
      turns[0]!();
      expect(started).toEqual(['/a', '/b']);
    } finally {
      bulkWriting(false);
    }
  });

  it('starts the rest of a batch when a listener throws, then throws the first error', () => {
    const started: string[] = [];
    const turns: (() => void)[] = [];
    const listener = startTogether(
      (req) => {
        started.push(req.url!);
        if (req.url === '/b' || req.url === '/c') throw new Error(`listener failed on ${req.url}`);
      },
      (start) => turns.push(start),
    );
    for (const name of ['a', 'b', 'c', 'd']) listener(...pair(name));

    expect(() => turns[0]!()).toThrow('listener failed on /b');
    expect(started).toEqual(['/a', '/b', '/c', '/d']);

    // The next turn starts afresh.
    listener(...pair('e'));
    turns[1]!();
    expect(started.at(-1)).toBe('/e');
  });

  it('answers every request over real sockets, each body read whole after the late start', async () => {
    const server = http.createServer(
      startTogether((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(chunks);
          res.setHeader('content-type', 'text/plain');
          res.end(`${req.url} ${body.length} ${body.subarray(-8).toString()}`);
        });
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
    try {
      const post = (i: number): Promise<string> => {
        // Small bodies arrive with their headers; large ones in many reads.
        const body = Buffer.alloc(i % 2 === 0 ? 100 : 300_000, 'x');
        body.write(`-end${String(i).padStart(4, '0')}`, body.length - 8);
        return new Promise((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/r${i}`, agent }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (s: string) => (text += s));
            res.on('end', () => resolve(text));
          });
          req.on('error', reject);
          req.end(body);
        });
      };
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i)));
      answers.forEach((answer, i) => expect(answer).toBe(`/r${i} ${i % 2 === 0 ? 100 : 300_000} -end${String(i).padStart(4, '0')}`));
    } finally {
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
