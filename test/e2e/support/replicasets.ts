/** What the controller e2e tests share: waiting for a condition, and a ReplicaSet created with kubectl. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Poll `check` every 250 ms until it holds (true) or `ms` pass (false); a thrown check counts as not yet. */
export async function eventually(check: () => Promise<boolean>, ms = 60_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** `kubectl create -f` of a ReplicaSet `name` in `default`, selecting and labelling its pods `app=<name>`. */
export async function createReplicaSet(kubectl: (...args: string[]) => Promise<string>, dir: string, name: string, replicas: number): Promise<void> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: 'default' },
      spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    }),
  );
  await kubectl('create', '-f', file);
}
