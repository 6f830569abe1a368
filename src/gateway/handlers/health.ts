/**
 * `/livez`, `/readyz`, `/healthz` and `/<endpoint>/<check>`, worded exactly as upstream's
 * healthz package words them (docs/API.md, "Other endpoints"): `ok`, or with `verbose` one
 * `[+]<check> ok` line per check and `<endpoint> check passed`; `exclude=<check>` skips a check
 * (`[+]<check> excluded: ok`); any failure is a 500 listing every check with reasons withheld.
 */
import { writeText } from '../respond';
import type { Exchange } from '../types';

export interface HealthCheck {
  name: string;
  /** Resolve when healthy; throw (or reject) with the reason otherwise. */
  check(): void | Promise<void>;
}

export type HealthEndpoint = 'livez' | 'readyz' | 'healthz';

export type HealthChecks = Readonly<Record<HealthEndpoint, readonly HealthCheck[]>>;

export const HEALTH_ENDPOINTS: readonly HealthEndpoint[] = ['livez', 'readyz', 'healthz'];

async function run(check: HealthCheck): Promise<Error | undefined> {
  try {
    await check.check();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

export interface HealthReport {
  status: 200 | 500;
  body: string;
  /** Failed checks with their reasons, for the log (the response withholds them). */
  failures: string[];
}

export async function healthReport(endpoint: HealthEndpoint, checks: readonly HealthCheck[], query: URLSearchParams): Promise<HealthReport> {
  const excluded = new Set(query.getAll('exclude'));
  let out = '';
  const failures: string[] = [];
  for (const check of checks) {
    if (excluded.delete(check.name)) {
      out += `[+]${check.name} excluded: ok\n`;
      continue;
    }
    const err = await run(check);
    if (err) {
      out += `[-]${check.name} failed: reason withheld\n`;
      failures.push(`[-]${check.name} failed: ${err.message}`);
    } else {
      out += `[+]${check.name} ok\n`;
    }
  }
  if (excluded.size) {
    const names = [...excluded]
      .sort()
      .map((n) => JSON.stringify(n))
      .join(',');
    out += `warn: some health checks cannot be excluded: no matches for ${names}\n`;
  }
  if (failures.length) return { status: 500, body: `${out}${endpoint} check failed\n`, failures };
  if (!query.has('verbose')) return { status: 200, body: 'ok', failures };
  return { status: 200, body: `${out}${endpoint} check passed\n`, failures };
}

export async function serveHealth(exchange: Exchange, endpoint: HealthEndpoint, checks: readonly HealthCheck[]): Promise<void> {
  const report = await healthReport(endpoint, checks, exchange.request.query);
  writeText(exchange, report.status, report.body);
}

/** One check on its own: `ok`, or 500 `internal server error: <reason>`. */
export async function healthCheckAnswer(check: HealthCheck): Promise<{ status: 200 | 500; body: string }> {
  const err = await run(check);
  return err ? { status: 500, body: `internal server error: ${err.message}\n` } : { status: 200, body: 'ok' };
}

export async function serveHealthCheck(exchange: Exchange, check: HealthCheck): Promise<void> {
  const answer = await healthCheckAnswer(check);
  writeText(exchange, answer.status, answer.body);
}
