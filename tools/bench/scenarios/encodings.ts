/**
 * Scenario 6: serialize/deserialize per format for a ReplicaSet and a 1,000-item list, CPU µs
 * per call in the load-generator process (no server involved), against the JSON the gateway
 * serves. When tools/bench-encodings.ts exists (the encodings owner's bench), its output is
 * included as well.
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

export async function runEncodings(ctx: Context): Promise<void> {
  ctx.log('6. encodings');
  const minMs = ctx.options.quick ? 150 : 600;
  const rows = await ctx.worker.call<EncodingRow[]>('encodings', { template: ctx.template ?? fallbackTemplate(), minMs });
  for (const subject of [...new Set(rows.map((r) => r.subject))]) {
    const of = rows.filter((r) => r.subject === subject);
    const json = of[0];
    for (const r of of) {
      const total = r.encodeUs + r.decodeUs;
      ctx.rows.push({
        scenario: 6,
        name: `${r.format}: ${subject}`,
        keelson: `encode ${micros(r.encodeUs)} µs, decode ${micros(r.decodeUs)} µs; ${bytes(r.bytes)}`,
        reference: r === json ? '(reference)' : `${micros(json.encodeUs)} / ${micros(json.decodeUs)} µs; ${bytes(json.bytes)}`,
        ratio: r === json ? '1.00×' : `${((json.encodeUs + json.decodeUs) / total).toFixed(2)}×`,
        cpu: `${micros(total)} enc+dec`,
        latency: '',
        note: r === json ? 'the floor: no key ordering, no schema' : 'ratio: reference µs ÷ this format µs (enc+dec); first encode of an object version',
      });
    }
  }
  const external = path.join(ROOT, 'tools/bench-encodings.ts');
  if (existsSync(external)) {
    ctx.log('6. tools/bench-encodings.ts');
    const out = spawnSync(process.execPath, ['-r', '@swc-node/register', external, ...(ctx.options.quick ? ['--quick'] : [])], { cwd: ROOT, encoding: 'utf8', timeout: 180_000 });
    ctx.sections.push(`## Encodings (tools/bench-encodings.ts)\n\n${(out.stdout || out.stderr || '(no output)').trim()}`);
  }
}
