/**
 * The timed store (server/store-metrics.ts): every call is counted in
 * `etcd_request_duration_seconds` under its operation and its key's type, failures too, and the
 * type kept at hand for runs of one type never labels another type's call.
 */
import { timedStore } from '../../src/server/store-metrics';
import { ServerMetrics } from '../../src/metrics';
import { createStore } from '../../src/store';

async function counts(metrics: ServerMetrics): Promise<Record<string, number>> {
  const { body } = await metrics.text();
  const out: Record<string, number> = {};
  for (const m of body.matchAll(/^etcd_request_duration_seconds_count\{operation="([^"]*)",type="([^"]*)"\} (\d+)$/gm)) out[`${m[1]} ${m[2]}`] = Number(m[3]);
  return out;
}

test('each call counts under its operation and type, whatever order the types come in', async () => {
  const metrics = new ServerMetrics();
  const store = timedStore(createStore({ kind: 'embedded', inMemory: true }), metrics);
  await store.create('/registry/configmaps/default/a', Buffer.from('{}'));
  await store.create('/registry/configmaps/default/b', Buffer.from('{}'));
  await store.create('/registry/secrets/default/a', Buffer.from('{}'));
  await store.create('/registry/configmaps/default/c', Buffer.from('{}'));
  // A key outside /registry/ and a bare type are typed by their first segment.
  await store.create('/registry/configmapsx/default/d', Buffer.from('{}'));
  await store.create('other/key', Buffer.from('{}'));
  await store.get('/registry/configmaps/default/a');
  await store.list('/registry/configmaps/');
  await store.currentRevision();
  // A failed call is timed too.
  await expect(store.create('/registry/configmaps/default/a', Buffer.from('{}'))).rejects.toMatchObject({ code: 'exists' });
  expect(await counts(metrics)).toEqual({
    'create configmaps': 4,
    'create secrets': 1,
    'create configmapsx': 1,
    'create other': 1,
    'get configmaps': 1,
    'list configmaps': 1,
    'currentRevision ': 1,
  });
  await store.close();
});
