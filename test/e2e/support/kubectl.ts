/** Unmodified kubectl 1.32 against a server process's admin kubeconfig, with readable failures. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ServerProcess } from '../../gateway/support/server-process';

const run = promisify(execFile);

export const KUBECTL = '/usr/bin/kubectl';

/** A `kubectl(...args)` bound to the server `getServer()` returns when called; resolves to stdout. */
export function kubectlFor(getServer: () => ServerProcess): (...args: string[]) => Promise<string> {
  return async (...args) => {
    try {
      return (await run(KUBECTL, ['--kubeconfig', getServer().kubeconfig, ...args], { timeout: 30_000 })).stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
    }
  };
}

/** kubectl's table rows, runs of spaces as ` | `, the AGE cell (any value: `5s`, `2m5s`, `3h`) as `<age>`. */
export function kubectlRows(output: string): string[] {
  return output
    .trim()
    .split('\n')
    .map((l) =>
      l
        .trim()
        .replace(/ {2,}/g, ' | ')
        .replace(/\| \d+[smhd](\d+[smh])?( \||$)/, '| <age>$2'),
    );
}
