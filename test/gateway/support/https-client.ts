/** A small HTTPS client for tests that talk to a real listener. */
import https from 'node:https';

export interface ClientTls {
  ca: string;
  cert?: string;
  key?: string;
}

export interface HttpsResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function httpsRequest(
  url: string,
  tls: ClientTls,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: init.method ?? 'GET', headers: init.headers, ca: tls.ca, cert: tls.cert, key: tls.key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.body) req.write(init.body);
    req.end();
  });
}

/** Open a streaming GET; `lines` collects newline-separated documents as they arrive. */
export function httpsStream(url: string, tls: ClientTls) {
  const lines: string[] = [];
  let buffered = '';
  let onLine: (() => void) | undefined;
  let statusCode = 0;
  let headers: Record<string, string | string[] | undefined> = {};
  let ended = false;
  let closed = false;
  const req = https.request(url, { ca: tls.ca, cert: tls.cert, key: tls.key, agent: false });
  const opened = new Promise<void>((resolve, reject) => {
    req.on('response', (res) => {
      statusCode = res.statusCode ?? 0;
      headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          lines.push(buffered.slice(0, nl));
          buffered = buffered.slice(nl + 1);
          onLine?.();
        }
      });
      res.on('end', () => {
        ended = true;
        onLine?.();
      });
      // Closed without an end (`close()`, a dropped connection): no line will come.
      res.on('close', () => {
        closed = true;
        onLine?.();
      });
      res.on('error', () => {});
      resolve();
    });
    req.on('error', reject);
  });
  req.end();
  return {
    opened,
    lines,
    get status() {
      return statusCode;
    },
    get headers() {
      return headers;
    },
    get ended() {
      return ended;
    },
    /** The response closed, ended or not. */
    get closed() {
      return closed;
    },
    /** Resolve once at least `n` lines arrived (or the stream ended or closed): woken by each line, not a timer. */
    async waitForLines(n: number, timeoutMs = 5000): Promise<void> {
      if (lines.length >= n || ended || closed) return;
      await new Promise<void>((resolve, reject) => {
        const deadline = setTimeout(() => {
          onLine = undefined;
          reject(new Error(`only ${lines.length} of ${n} lines arrived`));
        }, timeoutMs);
        onLine = () => {
          if (lines.length < n && !ended && !closed) return;
          clearTimeout(deadline);
          onLine = undefined;
          resolve();
        };
      });
    },
    close: () => req.destroy(),
  };
}
