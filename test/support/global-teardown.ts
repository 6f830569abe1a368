/** Remove the home directory globalSetup made. */
import { rmSync } from 'node:fs';

export default function globalTeardown(): void {
  const home = process.env.HOME ?? '';
  if (home.includes('keelson-test-home-')) rmSync(home, { recursive: true, force: true });
}
