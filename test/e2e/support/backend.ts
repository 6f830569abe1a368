/**
 * The real server process on a chosen backend: the embedded store, or a fresh real etcd that
 * is stopped together with the server.
 */
import { startEtcd } from '../../support/etcd';
import { API_ONLY, startServerProcess, type ServerProcess } from '../../gateway/support/server-process';

export type Backend = 'embedded' | 'etcd';

/** Start `src/server/main.ts` with `args` (default `--vendor kubernetes`, API machinery only); `stop()` also stops its etcd. */
export async function startServerOnBackend(backend: Backend | boolean, args: string[] = ['--vendor', 'kubernetes', ...API_ONLY]): Promise<ServerProcess> {
  if (backend !== 'etcd' && backend !== true) return startServerProcess(args);
  const etcd = await startEtcd();
  let server: ServerProcess;
  try {
    server = await startServerProcess([...args, '--etcd-servers', etcd.endpoint]);
  } catch (err) {
    await etcd.stop();
    throw err;
  }
  return {
    ...server,
    async stop() {
      const code = await server.stop();
      await etcd.stop();
      return code;
    },
  };
}
