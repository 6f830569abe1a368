/** The real server process on the embedded store, with kubectl 1.32. */
import { e2eSuite } from './support/e2e-suite';
import { type ServerProcess, startServerProcess } from './support/server-process';

let server: ServerProcess;

beforeAll(async () => {
  server = await startServerProcess(['--vendor', 'kubernetes']);
});

afterAll(async () => {
  expect(await server.stop()).toBe(0);
});

describe('e2e: embedded store', () => {
  e2eSuite(() => server);
});
