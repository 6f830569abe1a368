/**
 * Send generated hostile requests to a running server and report what happened: answers by
 * status, every 5xx (with its class, so it can become a regression case), whether the process
 * survived, the slowest request, and the server's RSS against its idle RSS.
 */
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { fuzzRequest, seedObjects, type FuzzRequest } from './generate';

export interface Target {
  url: string;
  pid: number;
  tls: { ca: string; cert: string; key: string };
}

export interface FuzzReport {
  requests: number;
  byStatus: Record<string, number>;
  serverErrors: Array<{ index: number; cls: string; status: number; message: string }>;
  alive: boolean;
  slowestMs: number;
  slowestClass: string;
  idleRssMb: number;
  peakRssMb: number;
  finalRssMb: number;
}

/** VmRSS or VmHWM of a process, in MiB. */
export function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  return m ? Number(m[1]) / 1024 : 0;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function send(
  agent: https.Agent,
  target: Target,
  req: Pick<FuzzRequest, 'method' | 'path' | 'contentType' | 'body'>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const r = https.request(
      `${target.url}${req.path}`,
      { method: req.method, agent, headers: { 'content-type': req.contentType, accept: 'application/json' }, timeout: 60_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8', 0, 2000) }));
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error('timed out')));
    r.on('error', reject);
    r.end(req.body);
  });
}

/** The bookkeeping of one run, whichever door it goes through. */
export class FuzzRecorder {
  readonly report: FuzzReport;

  constructor(private readonly pid: number) {
    const idleRssMb = rssMb(pid);
    this.report = {
      requests: 0,
      byStatus: {},
      serverErrors: [],
      alive: true,
      slowestMs: 0,
      slowestClass: '',
      idleRssMb,
      peakRssMb: idleRssMb,
      finalRssMb: idleRssMb,
    };
  }

  /** Record one answer (`status` 0: none came); false when the server has died and the run must stop. */
  record(index: number, cls: string, ms: number, status: number, message: string): boolean {
    const report = this.report;
    if (ms > report.slowestMs) {
      report.slowestMs = ms;
      report.slowestClass = cls;
    }
    report.requests++;
    report.byStatus[String(status)] = (report.byStatus[String(status)] ?? 0) + 1;
    if (status >= 500 || status === 0) {
      report.serverErrors.push({ index, cls, status, message: message.slice(0, 300) });
      if (!alive(this.pid)) {
        report.alive = false;
        return false;
      }
    }
    if (index % 50 === 0) report.peakRssMb = Math.max(report.peakRssMb, rssMb(this.pid));
    return true;
  }

  finish(): FuzzReport {
    if (this.report.alive) {
      this.report.peakRssMb = Math.max(this.report.peakRssMb, rssMb(this.pid, 'VmHWM'));
      this.report.finalRssMb = rssMb(this.pid);
    }
    return this.report;
  }
}

export async function runFuzz(
  target: Target,
  options: { seed: number; count: number; only?: number[]; onProgress?: (done: number) => void },
): Promise<FuzzReport> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key });
  for (const seed of seedObjects())
    await send(agent, target, { method: 'POST', path: seed.path, contentType: 'application/json', body: Buffer.from(JSON.stringify(seed.body)) });
  global.gc?.();
  const recorder = new FuzzRecorder(target.pid);
  const indexes = options.only ?? Array.from({ length: options.count }, (_, i) => i);
  for (const i of indexes) {
    const req = fuzzRequest(options.seed, i);
    if (process.env.KEELSON_FUZZ_TRACE) process.stderr.write(`${i} ${req.cls} ${req.method} ${req.path} ${req.contentType} ${req.body.length}\n`);
    const started = performance.now();
    let status: number;
    let body = '';
    try {
      ({ status, body } = await send(agent, target, req));
    } catch (err) {
      status = 0;
      body = (err as Error).message;
    }
    let message = body;
    if (status >= 500 || status === 0) {
      try {
        message = (JSON.parse(body) as { message?: string }).message ?? body;
      } catch {
        // not JSON
      }
    }
    if (!recorder.record(i, req.cls, performance.now() - started, status, message)) break;
    options.onProgress?.(i + 1);
  }
  agent.destroy();
  return recorder.finish();
}
