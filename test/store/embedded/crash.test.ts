/**
 * Durability of the embedded store: a writer process is killed with SIGKILL mid-stream; every
 * write it acknowledged must be there when the store is reopened, and revisions must go on
 * from where they stopped (WAL + synchronous=NORMAL, see embedded-log.ts).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createStore, type Store } from '../../../src/store';
import { WatchRecorder } from '../watch-recorder';

interface Ack {
  op: 'ready' | 'create' | 'counter';
  index: number;
  revision: number;
}

const CHILD = path.join(__dirname, 'crash-child.ts');
const SWC_REGISTER = require.resolve('@swc-node/register');

/** Runs the writer until it has acknowledged `killAfter` writes, then SIGKILLs it. */
function runWriterAndKill(dataDir: string, firstIndex: number, killAfter: number): Promise<Ack[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', SWC_REGISTER, CHILD, dataDir, String(firstIndex)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: Ack[] = [];
    let partial = '';
    let stderr = '';
    let killed = false;
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? ''; // an incomplete last line was not acknowledged
      for (const line of lines) {
        const [op, a, b] = line.split(' ');
        acks.push(op === 'ready' ? { op, index: -1, revision: Number(a) } : { op: op as Ack['op'], index: Number(a), revision: Number(b) });
      }
      if (!killed && acks.length >= killAfter) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    // 'close' comes after the pipe is drained: every line written before the kill is in `acks`.
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' && killed) resolve(acks);
      else reject(new Error(`writer exited early (code ${code}, signal ${signal}): ${stderr}`));
    });
    child.on('error', reject);
  });
}

async function expectAcknowledgedWritesPresent(store: Store, acks: Ack[]): Promise<void> {
  const creates = acks.filter((ack) => ack.op === 'create');
  for (const ack of creates) {
    const { kv } = await store.get(`/registry/crash/k${ack.index}`);
    expect(kv?.modRevision).toBe(ack.revision);
    expect(Buffer.from(kv?.value ?? []).toString()).toBe(`v${ack.index}`);
  }
  const lastCounter = acks.filter((ack) => ack.op === 'counter').pop();
  if (lastCounter) {
    // The writer may have committed one more update it never got to print: at least the ack.
    const { kv } = await store.get('/registry/crash/counter');
    expect(kv?.modRevision).toBeGreaterThanOrEqual(lastCounter.revision);
    expect(Number(Buffer.from(kv?.value ?? []).toString())).toBeGreaterThanOrEqual(lastCounter.index);
  }
  expect(await store.currentRevision()).toBeGreaterThanOrEqual(Math.max(...acks.map((ack) => ack.revision)));
}

function expectIncreasing(revisions: number[]): void {
  for (let i = 1; i < revisions.length; i++) expect(revisions[i]).toBeGreaterThan(revisions[i - 1]);
}

describe('embedded store survives kill -9', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-crash-'));
  });
  afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

  test('every acknowledged write survives, and revisions continue monotonically across crashes', async () => {
    const first = await runWriterAndKill(dataDir, 0, 3000);
    const firstWrites = first.filter((ack) => ack.op !== 'ready');
    expect(firstWrites.length).toBeGreaterThanOrEqual(2999);
    expectIncreasing(firstWrites.map((ack) => ack.revision));

    const reopened = createStore({ kind: 'embedded', dataDir });
    await expectAcknowledgedWritesPresent(reopened, first);
    await reopened.close();

    // A second writer process picks up after the crash, and is killed in turn.
    const second = await runWriterAndKill(dataDir, 1_000_000, 2000);
    const [ready, ...secondWrites] = second;
    expect(ready.op).toBe('ready');
    expect(ready.revision).toBeGreaterThanOrEqual(firstWrites[firstWrites.length - 1].revision);
    expect(secondWrites[0].revision).toBe(ready.revision + 1);
    expectIncreasing(secondWrites.map((ack) => ack.revision));

    const store = createStore({ kind: 'embedded', dataDir });
    try {
      await expectAcknowledgedWritesPresent(store, [...first, ...second]);
      // The whole history replays: one event per revision from 1 on, no gaps, acks where printed.
      const current = await store.currentRevision();
      const recorder = new WatchRecorder();
      const watch = store.watch('/registry/crash/', { startRevision: 1 }, recorder.handlers);
      await recorder.untilRevision(current);
      watch.cancel();
      expect(recorder.events.map((e) => e.revision)).toEqual(Array.from({ length: current }, (_, i) => i + 1));
      const byRevision = new Map(recorder.events.map((e) => [e.revision, e]));
      for (const ack of [...firstWrites, ...secondWrites]) {
        const key = ack.op === 'create' ? `/registry/crash/k${ack.index}` : '/registry/crash/counter';
        expect(byRevision.get(ack.revision)?.kv.key).toBe(key);
      }
      const next = await store.create('/registry/crash/after', Buffer.from('x'));
      expect(next.modRevision).toBe(current + 1);
    } finally {
      await store.close();
    }
  });
});
