/**
 * Scenario 6: serialize/deserialize per format for a ReplicaSet and a 1,000-item list. In full
 * runs, when tools/bench-encodings.ts exists (the encodings owner's bench), it is run and its
 * table both shown in full and folded into the main table; otherwise, and in --quick runs, the
 * bench measures the gateway's codecs itself (CPU µs per call in the load-generator process,
 * see ../encodings.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../build';
import type { Context } from '../context';
import type { EncodingRow } from '../encodings';
import { replicaSet } from '../fixtures';
import { bytes, micros } from '../report';

/** When no server has been asked yet (--only 6): the fixture with the metadata a server adds. */
function fallbackTemplate(): Record<string, unknown> {
  const rs = replicaSet('template', 'bench-template');
  const meta = rs.metadata as Record<string, unknown>;
  Object.assign(meta, { uid: '4c1f7c36-2f0e-4d5e-9d0e-1b2a3c4d5e6f', resourceVersion: '12345', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' });
  return rs;
}

function addRows(ctx: Context, rows: EncodingRow[], how: string): void {
  for (const subject of [...new Set(rows.map((r) => r.subject))]) {
    const of = rows.filter((r) => r.subject === subject);
    const reference = of[0];
    for (const r of of) {
      const total = r.encodeUs + r.decodeUs;
      // Issue 15's row: YAML encode + decode of one object against JSON's (the first subject is the single object).
      if (r.format === 'YAML' && subject === rows[0].subject) {
        const share = (reference.encodeUs + reference.decodeUs) / total;
        ctx.budgets.push({ budget: `YAML encode + decode vs JSON: ${subject}`, target: '≥ 0.1×', measured: `${share.toFixed(3)}×`, met: share >= 0.1 });
      }
      ctx.rows.push({
        scenario: 6,
        name: `${r.format}: ${subject}`,
        keelson: `encode ${micros(r.encodeUs)} µs, decode ${micros(r.decodeUs)} µs; ${bytes(r.bytes)}`,
        reference: r === reference ? '(reference)' : `${micros(reference.encodeUs)} / ${micros(reference.decodeUs)} µs; ${bytes(reference.bytes)}`,
        ratio: r === reference ? '1.00×' : `${((reference.encodeUs + reference.decodeUs) / total).toFixed(2)}×`,
        cpu: `${micros(total)} enc+dec`,
        latency: '',
        note: r === reference ? `the reference: ${reference.format}; ${how}` : 'ratio: reference µs ÷ this format µs (enc+dec)',
      });
    }
  }
}

/**
 * Rows from tools/bench-encodings.ts' Markdown table (columns `format`, `object`, `bytes`,
 * `encode ops/s`, `decode ops/s`); undefined if the table is not there or not in that shape.
 */
export function parseEncodingsTable(text: string): EncodingRow[] | undefined {
  const lines = text.split('\n').filter((l) => l.trim().startsWith('|'));
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((c) => c.trim());
  const headerAt = lines.findIndex((l) => /\bformat\b/.test(l) && /encode ops\/s/.test(l));
  if (headerAt < 0) return undefined;
  const header = cells(lines[headerAt]);
  const col = (name: string) => header.indexOf(name);
  const [format, object, size, enc, dec] = [col('format'), col('object'), col('bytes'), col('encode ops/s'), col('decode ops/s')];
  if ([format, object, size, enc, dec].some((i) => i < 0)) return undefined;
  const num = (s: string) => Number(s.replace(/,/g, ''));
  const rows = lines
    .slice(headerAt + 2)
    .map(cells)
    .map((c) => ({ subject: c[object], format: c[format], bytes: num(c[size]), encodeUs: 1e6 / num(c[enc]), decodeUs: 1e6 / num(c[dec]) }));
  return rows.length && rows.every((r) => Number.isFinite(r.encodeUs + r.decodeUs + r.bytes)) ? rows : undefined;
}

export async function runEncodings(ctx: Context): Promise<void> {
  const external = path.join(ROOT, 'tools/bench-encodings.ts');
  // Its median-of-three runs take about a minute even when short: full runs only.
  if (existsSync(external) && !ctx.options.quick) {
    ctx.log('6. encodings (tools/bench-encodings.ts)');
    const out = spawnSync(process.execPath, ['-r', '@swc-node/register', external, '--seconds', '1'], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    const text = (out.stdout || '').trim();
    const rows = parseEncodingsTable(text);
    if (rows) addRows(ctx, rows, 'µs from tools/bench-encodings.ts ops/s (wall clock, one process)');
    else
      ctx.rows.push({
        scenario: 6,
        name: 'encodings',
        keelson: 'see tools/bench-encodings.ts below',
        reference: '',
        ratio: '',
        cpu: '',
        latency: '',
        note: out.error ? String(out.error) : '',
      });
    ctx.sections.push(`## Encodings (tools/bench-encodings.ts)\n\n${text || out.stderr || '(no output)'}`);
    return;
  }
  ctx.log('6. encodings');
  const minMs = ctx.options.quick ? 100 : 600;
  const rows = await ctx.worker.call<EncodingRow[]>('encodings', { template: ctx.template ?? fallbackTemplate(), minMs });
  addRows(ctx, rows, 'CPU µs per call in one process; first encode of an object version');
}
