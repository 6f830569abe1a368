/**
 * A loopback TCP port that was free a moment ago.
 *
 * The kernel picks it (listen on port 0), then we release it for the caller. Another process may
 * grab it in between, so callers that bind it in a child process should retry on a bind failure
 * (`startEtcd` does).
 */
import net from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('listening on port 0 gave no TCP address'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
