/**
 * Graceful shutdown on SIGTERM, as upstream's: /readyz fails at once while requests are still
 * served for --shutdown-delay-duration, then open watches end cleanly, a request in flight
 * finishes and is answered, and the process exits 0.
 */
import https from 'node:https';
import { startServerProcess } from '../gateway/support/server-process';
import { httpsRequest, httpsStream } from '../gateway/support/https-client';
import { eventually } from '../support/eventually';

test('SIGTERM: readyz fails first, serving goes on for the delay, watches end, in-flight requests finish', async () => {
  const server = await startServerProcess(['--vendor', 'kubernetes', '--shutdown-delay-duration', '2s', '--simulated-nodes', '0']);
  const tls = server.admin;
  try {
    const watch = httpsStream(`${server.url}/api/v1/namespaces/default/configmaps?watch=true`, tls);
    await watch.opened;
    expect(watch.status).toBe(200);

    // A create whose body has not fully arrived is in flight when the signal comes.
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'in-flight' } });
    const req = https.request(`${server.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      agent: false,
      headers: { 'Content-Type': 'application/json', 'Content-Length': String(body.length) },
    });
    const answered = new Promise<number>((resolve, reject) => {
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    req.write(body.slice(0, 10));
    const mutating = async () =>
      /^apiserver_current_inflight_requests\{request_kind="mutating"\} (\d+)$/m.exec((await httpsRequest(`${server.url}/metrics`, tls)).body)?.[1];
    await eventually(async () => (await mutating()) === '1', { what: 'the create to be in flight' });

    process.kill(server.pid, 'SIGTERM');
    const readyz = await eventually(
      async () => {
        const answer = await httpsRequest(`${server.url}/readyz?verbose`, tls);
        return answer.status === 500 && answer;
      },
      { what: 'readyz to fail' },
    );
    expect(readyz.body).toContain('[-]shutdown failed: reason withheld');
    expect((await httpsRequest(`${server.url}/livez`, tls)).status).toBe(200);
    expect((await httpsRequest(`${server.url}/api/v1/namespaces`, tls)).status).toBe(200);
    expect(watch.ended).toBe(false);

    // After the delay the watch ends cleanly; the request in flight still gets its answer.
    await watch.waitForLines(1_000_000, 5000).catch(() => undefined);
    expect(watch.ended).toBe(true);
    req.end(body.slice(10));
    expect(await answered).toBe(201);
    // It exits on its own (a second SIGTERM would mean "exit now", code 1).
    expect(await server.exited()).toBe(0);
    expect(server.output()).toContain('SIGTERM: shutting down');
  } finally {
    await server.stop();
  }
});
