/**
 * A test's own HTTP(S) server on a loopback port the kernel picks, and its shutdown: the
 * connections a test left open are closed with it.
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listen on 127.0.0.1 and a free port; resolves to the port. */
export async function listenOnLoopback(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

export function closeServer(server: Server): void {
  server.closeAllConnections();
  server.close();
}
