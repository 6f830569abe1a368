/** Socket-free request/response doubles for gateway tests. */
import { requestEntityTooLarge } from '../../../src/status';
import { type Exchange, type GatewayRequest, type GatewayResponse, type PeerCertificate, createExchange, parseRequestTarget } from '../../../src/gateway/types';

export interface FakeRequestInit {
  method?: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  cert?: PeerCertificate;
  signal?: AbortSignal;
}

export const ADMIN_CERT: PeerCertificate = { verified: true, commonName: 'admin', organizations: ['system:masters'] };

export function fakeRequest(init: FakeRequestInit): GatewayRequest {
  const { path, query } = parseRequestTarget(init.url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
  const body = init.body === undefined ? Buffer.alloc(0) : Buffer.from(init.body);
  return {
    method: init.method ?? 'GET',
    path,
    query,
    headers,
    peerCertificate: init.cert,
    signal: init.signal ?? new AbortController().signal,
    readBody: async (limit) => {
      if (body.length > limit) throw requestEntityTooLarge(`limit is ${limit}`);
      return body;
    },
  };
}

export class RecordingResponse implements GatewayResponse {
  status = 0;
  headers: Record<string, string | readonly string[]> = {};
  chunks: Buffer[] = [];
  ended = false;
  headersFlushed = false;
  private ended$?: () => void;
  readonly done = new Promise<void>((resolve) => (this.ended$ = resolve));
  /** Called after every write, e.g. to observe a stream as it goes. */
  onWrite?: (chunk: Buffer) => void;

  get headersSent(): boolean {
    return this.headersFlushed || this.ended || this.chunks.length > 0;
  }
  get statusCode(): number {
    return this.status || 200;
  }
  setHeader(name: string, value: string | readonly string[]): void {
    this.headers[name.toLowerCase()] = value;
  }
  writeHead(status: number): void {
    this.status = status;
  }
  flushHeaders(): void {
    this.headersFlushed = true;
  }
  write(chunk: Uint8Array | string): boolean {
    const b = Buffer.from(chunk);
    this.chunks.push(b);
    this.onWrite?.(b);
    return true;
  }
  async drain(): Promise<void> {}
  end(chunk?: Uint8Array | string): void {
    if (chunk !== undefined) this.chunks.push(Buffer.from(chunk));
    this.ended = true;
    this.ended$?.();
  }

  aborted = false;

  whenFlushed(): undefined {
    return undefined;
  }

  abort(): void {
    this.aborted = true;
    this.ended = true;
    this.ended$?.();
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
  get json(): any {
    return JSON.parse(this.text);
  }
  header(name: string): string | readonly string[] | undefined {
    return this.headers[name.toLowerCase()];
  }
}

export function fakeExchange(init: FakeRequestInit): { exchange: Exchange; response: RecordingResponse } {
  const response = new RecordingResponse();
  return { exchange: createExchange(fakeRequest(init), response), response };
}
