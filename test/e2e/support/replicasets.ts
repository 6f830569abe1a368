/** What the controller e2e tests share: a ReplicaSet created with kubectl. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

/** `kubectl create -f` of a ReplicaSet `name` in `default`, selecting and labelling its pods `app=<name>`. */
export async function createReplicaSet(kubectl: (...args: string[]) => Promise<string>, dir: string, name: string, replicas: number): Promise<void> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(
    file,
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: 'default' },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    }),
  );
  await kubectl('create', '-f', file);
}
