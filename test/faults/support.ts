/**
 * What the fault suite shares. `npm test` runs it reduced; `npm run test:faults` sets
 * KEELSON_FAULTS=full for the figures in docs/RELIABILITY.md.
 */
import { httpsRequest, type HttpsResult } from '../gateway/support/https-client';
import type { ServerProcess } from '../gateway/support/server-process';

export const FULL = process.env.KEELSON_FAULTS === 'full';

/** Fault tests restart servers many times; each file gets this long. */
export const FAULT_TIMEOUT_MS = FULL ? 3_600_000 : 240_000;

export interface Call {
  status: number;
  body: Record<string, any>;
}

/** One JSON request to the server; rejects on a transport failure (the server went away). */
export async function call(server: ServerProcess, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Call> {
  const text = body !== undefined ? JSON.stringify(body) : undefined;
  const r: HttpsResult = await httpsRequest(`${server.url}${path}`, server.admin, {
    method,
    headers: { Accept: 'application/json', ...(text !== undefined ? { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)) } : {}) },
    body: text,
  });
  let parsed: Record<string, any> = {};
  try {
    parsed = r.body ? JSON.parse(r.body) : {};
  } catch {
    parsed = { raw: r.body };
  }
  return { status: r.status, body: parsed };
}

export function summary(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`fault-suite ${name}: ${JSON.stringify(figures)}\n`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
