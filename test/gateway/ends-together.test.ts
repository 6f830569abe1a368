/**
 * Responses ended in one turn of the event loop go out together once the turn's I/O is handled
 * (express-adapter.ts `ResponseEnds`): over a real TLS server, the head is stored at end() and
 * the bytes follow within the turn; the responses ended in one turn are written in one pass; a
 * response dropped meanwhile is not written; a graceful close waits for them. Each listener (each
 * server) has its batch: another's is not waited for.
 */
import https from 'node:https';
import { ResponseEnds, toGatewayResponse as toResponse } from '../../src/gateway/express-adapter';
import { bulkWriting } from '../../src/util/bulk-writes';
import { type HeldResponses, startHeldResponses } from '../support/held-responses';

let server: HeldResponses;
/** The listener's batch, as one server's responses share it. */
const ends = new ResponseEnds();
const toGatewayResponse = (res: Parameters<typeof toResponse>[0]) => toResponse(res, ends);
const whenEndsWritten = () => ends.whenWritten();

beforeAll(async () => {
  server = await startHeldResponses('keelson-ends-');
});

afterAll(() => server.close());

const agent = () => new https.Agent({ ca: server.pki.caCert, keepAlive: false });

function get(): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port: server.port, path: '/', servername: 'localhost', agent: agent() }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
  });
}

const hold = (n: number) => server.hold(n);

test('the head is stored at end(), the bytes go out once the turn is over', async () => {
  const answer = get();
  const [res] = await hold(1);
  const response = toGatewayResponse(res!);
  response.setHeader('Content-Type', 'text/plain');
  response.writeHead(201);
  response.end('made');
  expect(response.headersSent).toBe(true);
  expect(res!.writableEnded).toBe(false);
  // Small: it counts as sent for the in-flight limits already.
  expect(response.whenFlushed()).toBeUndefined();
  await whenEndsWritten();
  expect(res!.writableEnded).toBe(true);
  await expect(answer).resolves.toEqual({ status: 201, body: 'made' });
});

test('responses ended in one turn are written in one pass, in order', async () => {
  const answers = [get(), get(), get()];
  const responses = await hold(3);
  responses.forEach((res, i) => toGatewayResponse(res).end(`answer ${i}`));
  expect(responses.map((res) => res.writableEnded)).toEqual([false, false, false]);
  await whenEndsWritten();
  expect(responses.map((res) => res.writableEnded)).toEqual([true, true, true]);
  expect((await Promise.all(answers)).map((a) => a.body)).toEqual(['answer 0', 'answer 1', 'answer 2']);
});

test('a response dropped before its turn is over is not written, and the others are', async () => {
  const dropped = get().then(
    () => 'answered',
    () => 'dropped',
  );
  const kept = get();
  const [first, second] = await hold(2);
  toGatewayResponse(first!).end('never');
  toGatewayResponse(first!).abort();
  toGatewayResponse(second!).end('kept');
  await whenEndsWritten();
  expect(await dropped).toBe('dropped');
  expect((await kept).body).toBe('kept');
});

test('a response whose end throws is dropped, and neither the others nor later turns are held up', async () => {
  const broken = get().then(
    () => 'answered',
    () => 'dropped',
  );
  const kept = get();
  const [first, second] = await hold(2);
  // A chunk node refuses: res.end throws.
  toGatewayResponse(first!).end(42 as unknown as string);
  toGatewayResponse(second!).end('kept');
  await whenEndsWritten();
  expect(await broken).toBe('dropped');
  expect((await kept).body).toBe('kept');
  const later = get();
  const [third] = await hold(1);
  toGatewayResponse(third!).end('later');
  await whenEndsWritten();
  expect((await later).body).toBe('later');
});

test('nothing ended: the wait is over at once', async () => {
  let done = false;
  void whenEndsWritten().then(() => (done = true));
  await Promise.resolve();
  expect(done).toBe(true);
});

test("one listener's batch is its own: another's wait is over at once, and its responses still go out", async () => {
  const answer = get();
  const [res] = await hold(1);
  toGatewayResponse(res!).end('mine');
  let otherDone = false;
  void new ResponseEnds().whenWritten().then(() => (otherDone = true));
  await Promise.resolve();
  expect(otherDone).toBe(true);
  expect(res!.writableEnded).toBe(false);
  await whenEndsWritten();
  expect(res!.writableEnded).toBe(true);
  expect((await answer).body).toBe('mine');
});

test("while bulk writes are pending, a response is written at end(), not at the turn's end", async () => {
  const own = new ResponseEnds();
  const written: string[] = [];
  const fake = (name: string) =>
    ({ destroyed: false, end: (chunk?: string) => written.push(`${name}:${chunk}`) }) as unknown as Parameters<ResponseEnds['end']>[0];
  bulkWriting(true);
  try {
    own.end(fake('a'), 'x');
    expect(written).toEqual(['a:x']);
    await own.whenWritten();
  } finally {
    bulkWriting(false);
  }
  own.end(fake('b'), 'y');
  expect(written).toEqual(['a:x']);
  await own.whenWritten();
  expect(written).toEqual(['a:x', 'b:y']);
});
