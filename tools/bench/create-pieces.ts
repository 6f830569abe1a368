/**
 * What a create's steps cost in process, each beside what Node itself costs for the same kind of
 * work, on the bench's ReplicaSet (tools/bench/fixtures.ts):
 *
 *   node -r @swc-node/register tools/bench/create-pieces.ts [--rounds 7] [--calls 20000] [--creates 20000]
 *
 * Each step runs `--calls` times on fresh copies made outside the timing; the figure is the
 * fastest of `--rounds` rounds, so a busy machine slows the figures less than it would an
 * average. The steps follow ResourceWrites.create; the reference beside a step is the plain
 * Node work a server that skipped the step's rules would still do (`JSON.parse`, `JSON.stringify`
 * and `Buffer.from`, or one walk over the object's values where the step is a check over them).
 * The bare floor of the create row (bare-server.ts) does exactly the parse and the two encodes.
 *
 * The last rows are a whole create through the gateway over a core on the embedded store,
 * socket-free, 64 in flight (CPU per create, the fastest round), and what of it the steps above
 * do not cover: the gateway's steps, admission, promises, the store, the watch cache's
 * adoption, the collector. The table (Markdown) goes to stdout.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { createCore } from '../../src/core';
import { type ApiObject, handOver } from '../../src/core/api';
import { freezeForAdoption } from '../../src/core/cache/cached-object';
import { updateManagedFields } from '../../src/core/registry/managed-fields';
import { builtinResources } from '../../src/core/resources';
import { encodeCreatedForStorage } from '../../src/core/storage/object-codec';
import { checkBodyFields } from '../../src/core/validation/field-validation';
import { validateObjectMeta } from '../../src/core/validation/metadata';
import { jsonCodec } from '../../src/gateway/codecs';
import { decodeObject } from '../../src/gateway/body';
import { ServerMetrics } from '../../src/metrics';
import { createNaming } from '../../src/naming';
import { schemaRegistry } from '../../src/schema/registry';
import { createStore } from '../../src/store';
import { toolArguments } from './ab';
import { gatewayOverCore } from './core-gateway';
import { replicaSet, replicaSetsPath } from './fixtures';
import { createThrough } from './scenarios/create';

const NAMESPACE = 'bench';
const MANAGER = { manager: 'kubectl', apiVersion: 'apps/v1', subresource: '' };

/** Visits every value of a JSON tree once: the least any check over all of them costs. */
function walk(value: unknown): number {
  if (value === null || typeof value !== 'object') return 1;
  let n = 1;
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) n += walk(value[i]);
  else for (const key in value) n += walk((value as Record<string, unknown>)[key]);
  return n;
}

void (async () => {
  const { flag } = toolArguments();
  const rounds = flag('--rounds', 7);
  const calls = flag('--calls', 20_000);
  const creates = flag('--creates', 20_000);
  const naming = createNaming('kubernetes');
  const def = builtinResources(naming).find((d) => d.resource === 'replicasets')!;
  const registry = schemaRegistry(naming);
  const json = jsonCodec;
  const body = Buffer.from(JSON.stringify(replicaSet('pieces', NAMESPACE)));
  const ctx = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'kubectl/v1.32.0' };

  /** µs per call, the fastest round; `prepare` runs outside the timing. */
  const time = <T>(prepare: () => T, step: (input: T) => unknown): number => {
    let best = Infinity;
    for (let r = 0; r < rounds; r++) {
      const inputs = Array.from({ length: calls }, prepare);
      const started = performance.now();
      for (let i = 0; i < calls; i++) step(inputs[i]!);
      best = Math.min(best, performance.now() - started);
    }
    return (best * 1000) / calls;
  };

  const decoded = (): ApiObject => decodeObject(json, body).object;
  /** The body as it reaches the store: system metadata, defaults, managedFields. */
  const prepared = (): ApiObject => {
    const obj = decoded();
    const meta = obj.metadata!;
    meta.uid = randomUUID();
    meta.creationTimestamp = '2026-11-29T12:00:00Z';
    meta.generation = 1;
    def.defaults?.(obj);
    meta.managedFields = updateManagedFields(undefined, obj, MANAGER, 0, naming);
    return obj;
  };
  const answered = (): ApiObject => {
    const obj = prepared();
    obj.metadata!.resourceVersion = '123456';
    return obj;
  };
  const _text = body.toString('utf8');
  const sctx = { naming, now: 0, user: ctx.user };

  const rows: Array<[string, number, number | undefined, string]> = [
    [
      'request body: limits, strict JSON decode (repeated keys)',
      time(
        () => body,
        (b) => decodeObject(json, b),
      ),
      time(
        () => body,
        (b) => JSON.parse(b.toString('utf8')),
      ),
      '`JSON.parse` of the text',
    ],
    [
      'unknown fields, fieldValidation=Strict',
      time(decoded, (o) => checkBodyFields(naming, def, handOver(o), 'Strict', ctx)),
      time(decoded, walk),
      'one walk over the values',
    ],
    [
      'system metadata and defaults',
      time(decoded, (o) => {
        const meta = o.metadata!;
        meta.uid = randomUUID();
        meta.creationTimestamp = '2026-11-29T12:00:00Z';
        meta.generation = 1;
        def.defaults?.(o);
      }),
      undefined,
      '',
    ],
    [
      'managedFields for one manager',
      time(
        () => {
          const o = decoded();
          def.defaults?.(o);
          return o;
        },
        (o) => updateManagedFields(undefined, o, MANAGER, 0, naming),
      ),
      undefined,
      '',
    ],
    [
      'validation: metadata and the ReplicaSet',
      time(prepared, (o) => [validateObjectMeta(o.metadata!, { namespaced: true, nameRule: def.nameRule }), def.validate?.(o, sctx)]),
      undefined,
      '',
    ],
    [
      'storage encode: upstream field order, the version left out',
      time(prepared, (o) => encodeCreatedForStorage(registry, o)),
      time(prepared, (o) => Buffer.from(JSON.stringify(o))),
      '`JSON.stringify` + `Buffer.from`',
    ],
    [
      'the answer: the version spliced into the stored text',
      time(
        () => encodeCreatedForStorage(registry, prepared())!,
        (c) => c.answer(123456),
      ),
      time(answered, (o) => Buffer.from(JSON.stringify(o))),
      '`JSON.stringify` + `Buffer.from`',
    ],
    ['freezing for the watch cache', time(prepared, (o) => freezeForAdoption(o)), time(prepared, walk), 'one walk over the values'],
  ];

  const whole = await wholeCreate(naming, body, rounds, creates);
  const steps = rows.reduce((sum, r) => sum + r[1], 0);
  const floor = rows.reduce((sum, r) => sum + (r[2] ?? 0), 0);
  const us = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(2));
  process.stdout.write(
    `create steps in process, ReplicaSet body ${body.length} B, fastest of ${rounds} rounds of ${calls} calls (Node ${process.version})\n\n`,
  );
  process.stdout.write('| step | Keelson µs | Node, the same work µs | reference |\n|---|---:|---:|---|\n');
  for (const [name, own, ref, what] of rows) process.stdout.write(`| ${name} | ${us(own)} | ${us(ref)} | ${what} |\n`);
  process.stdout.write(`| the steps above | ${us(steps)} | ${us(floor)} | |\n`);
  process.stdout.write(`| whole create, gateway over core on the embedded store, 64 in flight (CPU) | ${us(whole)} | | |\n`);
  process.stdout.write(`| of it outside the steps: gateway steps, admission, promises, store, cache, collector | ${us(whole - steps)} | | |\n`);
})();

/** CPU µs per create through the gateway over a core on the embedded store, the fastest of `rounds` rounds. */
async function wholeCreate(naming: ReturnType<typeof createNaming>, body: Buffer, rounds: number, creates: number): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'create-pieces-'));
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir }), naming, compactionIntervalMs: 0 });
  try {
    await core.ready();
    const admin = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'bench' };
    await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: NAMESPACE } }, {}, admin);
    const gateway = gatewayOverCore(core, naming, { limits: { maxReadOnly: 400, maxMutating: 200, requestTimeoutMs: 60_000 }, metrics: new ServerMetrics() });
    const template = JSON.parse(body.toString('utf8')) as { metadata: { name: string } };
    let n = 0;
    const one = async (): Promise<void> => {
      template.metadata.name = `p-${n++}`;
      await createThrough(gateway, replicaSetsPath(NAMESPACE), Buffer.from(JSON.stringify(template)));
    };
    const round = async (count: number): Promise<number> => {
      const before = process.cpuUsage();
      for (let done = 0; done < count; done += 64) await Promise.all(Array.from({ length: 64 }, one));
      const cpu = process.cpuUsage(before);
      return (cpu.user + cpu.system) / count;
    };
    await round(Math.min(creates, 5_000));
    let best = Infinity;
    for (let r = 0; r < rounds; r++) best = Math.min(best, await round(creates));
    return best;
  } finally {
    await core.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
