/**
 * One fresh home directory for the tools the tests run (globalSetup: the workers inherit it).
 * kubectl keeps discovery under `$HOME/.kube/cache` by host and port for hours; test servers
 * come and go on random loopback ports, with either naming profile, so a cache left by an
 * earlier run could hand a server another's API groups. Every test names its kubeconfig, so
 * nothing else is read from this home.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function globalSetup(): void {
  process.env.HOME = mkdtempSync(path.join(os.tmpdir(), 'keelson-test-home-'));
}
