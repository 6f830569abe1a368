/**
 * The Keelson server as the bench runs it: `src/server/main.ts` without the console chatter,
 * plus an IPC channel through which the orchestrator reads the server's own CPU time
 * (`process.cpuUsage()`, µs resolution) and memory, and can ask for a full GC before a memory
 * reading (the child runs with --expose-gc).
 *
 *   keelson-child.js [--bench-adapter express|node] <keelson flags>
 */
import { parseFlags, startServer } from '../../src/server';
import { sendEvent, serveCalls } from './ipc';

export interface ServerStats {
  /** User + system CPU time since the process started, µs. */
  cpuUs: number;
  rss: number;
  heapUsed: number;
  /** Memory outside the V8 heap held by JS objects (Buffers included). */
  external: number;
  /** Peak RSS so far, bytes. */
  maxRss: number;
  /** The monotonic clock (process.hrtime), µs: the time base of V8 CPU profiles, to cut a profile to a window. */
  hrtimeUs: number;
}

function stats(): ServerStats {
  const cpu = process.cpuUsage();
  const mem = process.memoryUsage();
  return {
    cpuUs: cpu.user + cpu.system,
    rss: mem.rss,
    heapUsed: mem.heapUsed,
    external: mem.external,
    maxRss: process.resourceUsage().maxRSS * 1024,
    hrtimeUs: Number(process.hrtime.bigint() / 1000n),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  let adapter: 'express' | 'node' | undefined;
  const at = argv.indexOf('--bench-adapter');
  if (at >= 0) {
    adapter = argv[at + 1] as 'express' | 'node';
    argv.splice(at, 2);
  }
  const parsed = parseFlags(argv);
  if (parsed.kind !== 'config') throw new Error(parsed.kind === 'error' ? parsed.error.message : 'unexpected --help');
  const server = await startServer(parsed.config, { waitForReady: false, adapter, log: () => {} });
  let _closing: Promise<void> | undefined;
  const stop = () => {
    _closing ??= server.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  serveCalls({
    stats: () => stats(),
    gc: () => {
      const gc = (globalThis as { gc?: () => void }).gc;
      // Twice: the first pass may only queue finalizers (Buffers) for the second.
      gc?.();
      gc?.();
      return stats();
    },
  });
  sendEvent({ event: 'listening', port: server.port });
  server.ready.then(
    () => sendEvent({ event: 'ready' }),
    (err: unknown) => sendEvent({ event: 'failed', message: String(err) }),
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`keelson-child: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
