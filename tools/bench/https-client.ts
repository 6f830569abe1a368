/**
 * A minimal HTTP/1.1 client over one keep-alive TLS connection, for the load generator.
 *
 * Why not node:https with an Agent: its per-request machinery (ClientRequest, IncomingMessage,
 * header objects, the agent's pool) costs the generator more CPU than the bare server spends
 * answering, and on a 2-core machine the generator's CPU is taken from the server measured.
 * This client writes a preformatted request and parses only what it needs (status,
 * Content-Length or chunked framing); bodies are kept, counted or streamed to a callback.
 * One request in flight per connection, like wrk's connections.
 */
import tls from 'node:tls';

export interface ClientTls {
  ca: string;
  cert?: string;
  key?: string;
}

export interface Target {
  host: string;
  port: number;
  tls: ClientTls;
}

export interface HttpResponse {
  status: number;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The body when asked to keep it, else empty. */
  body: Buffer;
  /** Body bytes received (after chunked decoding). */
  bodyBytes: number;
}

export interface RequestOptions {
  /** Keep the body (default true); false only counts its bytes. */
  keepBody?: boolean;
  /** Called with each body chunk as it arrives (watches); the promise settles when the body ends. */
  onBody?: (chunk: Buffer, receivedAt: number) => void;
  /** Called once the status line and headers are in. */
  onHead?: (status: number, headers: Record<string, string>) => void;
}

type State = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailers' | 'until-close';

interface Pending {
  resolve(response: HttpResponse): void;
  reject(err: Error): void;
  options: RequestOptions;
  status: number;
  headers: Record<string, string>;
  chunks: Buffer[];
  bodyBytes: number;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

export class HttpsConnection {
  private state: State = 'head';
  private head: Buffer | undefined;
  private line = '';
  private remaining = 0;
  private pending: Pending | undefined;
  private closedError: Error | undefined;

  private constructor(readonly socket: tls.TLSSocket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    const fail = (err?: Error) => {
      this.closedError ??= err ?? new Error('connection closed');
      if (this.state === 'until-close' && this.pending) this.finish();
      const pending = this.pending;
      this.pending = undefined;
      pending?.reject(this.closedError);
    };
    socket.on('error', fail);
    socket.on('close', () => fail());
  }

  static connect(target: Target): Promise<HttpsConnection> {
    return new Promise((resolve, reject) => {
      const socket = tls.connect({
        host: target.host,
        port: target.port,
        ca: target.tls.ca,
        cert: target.tls.cert,
        key: target.tls.key,
        // The bench talks to its own servers by IP; the CA check stays, the name check is moot.
        checkServerIdentity: () => undefined,
      });
      socket.setNoDelay(true);
      socket.once('secureConnect', () => {
        socket.off('error', reject);
        resolve(new HttpsConnection(socket));
      });
      socket.once('error', reject);
    });
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  /** Send one request: `head` is the request line and headers without the final blank line. */
  request(head: string, body?: Buffer, options: RequestOptions = {}): Promise<HttpResponse> {
    if (this.closedError) return Promise.reject(this.closedError);
    if (this.pending) return Promise.reject(new Error('a request is already in flight on this connection'));
    return new Promise<HttpResponse>((resolve, reject) => {
      this.pending = { resolve, reject, options, status: 0, headers: {}, chunks: [], bodyBytes: 0 };
      const text = body ? `${head}\r\ncontent-length: ${body.length}\r\n\r\n` : `${head}\r\n\r\n`;
      this.socket.write(body ? Buffer.concat([Buffer.from(text, 'latin1'), body]) : text);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    const receivedAt = performance.now();
    let offset = 0;
    while (offset < chunk.length && this.pending) {
      switch (this.state) {
        case 'head': {
          const data = this.head ? Buffer.concat([this.head, chunk.subarray(offset)]) : chunk.subarray(offset);
          const end = data.indexOf(CRLFCRLF);
          if (end < 0) {
            this.head = Buffer.from(data);
            return;
          }
          this.head = undefined;
          this.parseHead(data.subarray(0, end).toString('latin1'));
          // Continue after the blank line, in `data`'s coordinates.
          chunk = data;
          offset = end + 4;
          break;
        }
        case 'length': {
          const n = Math.min(this.remaining, chunk.length - offset);
          this.deliver(chunk.subarray(offset, offset + n), receivedAt);
          offset += n;
          this.remaining -= n;
          if (this.remaining === 0) this.finish();
          break;
        }
        case 'until-close': {
          this.deliver(chunk.subarray(offset), receivedAt);
          offset = chunk.length;
          break;
        }
        case 'chunk-size':
        case 'trailers': {
          const nl = chunk.indexOf(10, offset);
          if (nl < 0) {
            this.line += chunk.toString('latin1', offset);
            return;
          }
          const line = (this.line + chunk.toString('latin1', offset, nl)).replace(/\r$/, '');
          this.line = '';
          offset = nl + 1;
          if (this.state === 'trailers') {
            if (line === '') this.finish();
          } else {
            const size = parseInt(line, 16);
            if (size === 0) this.state = 'trailers';
            else {
              this.remaining = size;
              this.state = 'chunk-data';
            }
          }
          break;
        }
        case 'chunk-data': {
          const n = Math.min(this.remaining, chunk.length - offset);
          this.deliver(chunk.subarray(offset, offset + n), receivedAt);
          offset += n;
          this.remaining -= n;
          if (this.remaining === 0) {
            this.state = 'chunk-crlf';
            this.remaining = 2;
          }
          break;
        }
        case 'chunk-crlf': {
          const n = Math.min(this.remaining, chunk.length - offset);
          offset += n;
          this.remaining -= n;
          if (this.remaining === 0) this.state = 'chunk-size';
          break;
        }
      }
    }
  }

  private parseHead(text: string): void {
    const pending = this.pending!;
    const lines = text.split('\r\n');
    pending.status = Number(lines[0].split(' ')[1]);
    for (let i = 1; i < lines.length; i++) {
      const colon = lines[i].indexOf(':');
      if (colon > 0) pending.headers[lines[i].slice(0, colon).toLowerCase()] = lines[i].slice(colon + 1).trim();
    }
    pending.options.onHead?.(pending.status, pending.headers);
    const length = pending.headers['content-length'];
    if (/chunked/i.test(pending.headers['transfer-encoding'] ?? '')) this.state = 'chunk-size';
    else if (length !== undefined) {
      this.remaining = Number(length);
      this.state = 'length';
      if (this.remaining === 0) this.finish();
    } else if (pending.status === 204 || pending.status === 304) this.finish();
    else this.state = 'until-close';
  }

  private deliver(data: Buffer, receivedAt: number): void {
    const pending = this.pending!;
    pending.bodyBytes += data.length;
    if (pending.options.onBody) pending.options.onBody(data, receivedAt);
    else if (pending.options.keepBody !== false) pending.chunks.push(data);
  }

  private finish(): void {
    const pending = this.pending!;
    this.pending = undefined;
    this.state = 'head';
    pending.resolve({
      status: pending.status,
      headers: pending.headers,
      body: pending.chunks.length === 1 ? pending.chunks[0] : Buffer.concat(pending.chunks),
      bodyBytes: pending.bodyBytes,
    });
  }
}

/** `METHOD path HTTP/1.1` plus the headers every bench request sends (`extra.accept` replaces the default Accept). */
export function requestHead(method: string, path: string, target: Target, extra: Record<string, string> = {}): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `host: ${target.host}:${target.port}`,
    `accept: ${extra.accept ?? 'application/json'}`,
    'user-agent: keelson-bench',
  ];
  for (const [name, value] of Object.entries(extra)) if (name !== 'accept') lines.push(`${name}: ${value}`);
  return lines.join('\r\n');
}
