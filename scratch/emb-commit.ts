import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedStore } from '../src/store/embedded-store';
const group = Number(process.argv[2] ?? 16);
const total = Number(process.argv[3] ?? 40000);
const value = Buffer.from(JSON.stringify({ pad: 'x'.repeat(2900) }));
async function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'embc-'));
  const store = new EmbeddedStore({ dataDir: dir } as any);
  let n = 0;
  const t0 = process.hrtime.bigint(); const c0 = process.cpuUsage();
  while (n < total) {
    const ps = [];
    for (let i = 0; i < group; i++) ps.push(store.create(`/registry/rs/ns/k${n++}`, value));
    await Promise.all(ps);
  }
  const wall = Number(process.hrtime.bigint() - t0) / 1e3 / total; const c = process.cpuUsage(c0);
  console.log(`group ${group}: wall ${wall.toFixed(1)} µs/create, cpu user ${(c.user/total).toFixed(1)} sys ${(c.system/total).toFixed(1)} µs/create`);
  await store.close();
}
main();
