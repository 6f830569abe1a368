/** Waiting on what a child process prints: each chunk as it arrives, no polling. */
import type { ChildProcess } from 'node:child_process';

/**
 * Resolves once `output()` matches `pattern`, looked at as each chunk of the child's stdout or
 * stderr arrives; rejects, with what it printed, when the child exits first or `timeoutMs`
 * pass. `output` is what the caller collects (its own `data` listeners, added before this call).
 */
export function waitForOutput(child: ChildProcess, output: () => string, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(deadline);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve();
    };
    const check = () => {
      if (pattern.test(output())) done();
    };
    const onExit = (code: number | null) => done(new Error(`exited with ${code} before printing ${pattern}:\n${output()}`));
    const deadline = setTimeout(() => done(new Error(`did not print ${pattern} within ${timeoutMs} ms:\n${output()}`)), timeoutMs);
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.on('exit', onExit);
    if (pattern.test(output())) done();
    else if (child.exitCode !== null) onExit(child.exitCode);
  });
}
