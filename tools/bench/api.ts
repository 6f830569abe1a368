/**
 * The orchestrator's own API client: one keep-alive connection, requests in sequence. Used to
 * set scenarios up (namespaces, template objects) and as the writer in the watch scenario.
 */
import { HttpsConnection, type HttpResponse, type Target, requestHead } from './https-client';

export class ApiClient {
  private conn: HttpsConnection | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly target: Target) {}

  /** One request; JSON bodies are serialised here. Requests queue behind each other. */
  request(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> {
    const run = async () => {
      if (!this.conn || this.conn.socket.destroyed) this.conn = await HttpsConnection.connect(this.target);
      const head = requestHead(method, path, this.target, body === undefined ? headers : { 'content-type': 'application/json', ...headers });
      return this.conn.request(head, body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body)));
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => {});
    return result;
  }

  /** A request that must answer one of `ok`; returns the parsed body. */
  async expect(method: string, path: string, body: unknown, ok: number[]): Promise<Record<string, unknown>> {
    const res = await this.request(method, path, body);
    if (!ok.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.body.toString('utf8').slice(0, 300)}`);
    return res.body.length ? (JSON.parse(res.body.toString('utf8')) as Record<string, unknown>) : {};
  }

  /** Create a namespace (fine if it exists). */
  async namespace(name: string): Promise<void> {
    await this.expect('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, [201, 409]);
  }

  close(): void {
    this.conn?.close();
  }
}
