/**
 * fieldValidation on PATCH (docs/API.md, "Field validation") through the in-process core, with
 * patches decoded as the gateway decodes them: the patch body's own strict errors first
 * (repeated keys; unknown or repeated JSON patch operation fields, upstream's
 * `json patch ...` wording), then the unknown fields of the result in Go's sorted order;
 * Strict is the spec's 400 BadRequest (upstream's patch handler answers 422 on `patch`) and
 * stores nothing, on the object and on its `/scale`; apply's repeated keys are upstream's 400.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type Core, type FieldValidation, type RequestContext, type ResourceTarget } from '../../../src/core';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { StatusError } from '../../../src/status';
import { decodePatch } from '../../../src/gateway/body';
import type { PatchType } from '../../../src/core/api';
import { decodeStrictJson } from '../../../src/codecs/strict-json';
import { decodeStrictYaml, yamlDuplicateMessage } from '../../../src/codecs/strict-yaml';
import { warningsOf } from '../../../src/core/validation/field-validation';

const rs = (name?: string, subresource?: string): ResourceTarget => ({
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  namespace: 'default',
  name,
  ...(subresource ? { subresource } : {}),
});

describe('strict decoders', () => {
  it("JSON: repeated keys by Go path (map keys, indexes, top-level arrays); syntax errors keep JSON.parse's wording", () => {
    const { value, duplicates } = decodeStrictJson('{"a":{"b":[{"c":1,"c":2}]},"m":{"k":"1","k":"2"},"a":{"x":1}}');
    expect(value).toEqual({ a: { x: 1 }, m: { k: '2' } });
    expect(duplicates.map((d) => d.path)).toEqual(['a.b[0].c', 'm.k', 'a']);
    expect(decodeStrictJson('[{"op":"add","op":"remove"}]').duplicates.map((d) => d.path)).toEqual(['[0].op']);
    expect(() => decodeStrictJson('{"a":')).toThrow(SyntaxError);
    expect(decodeStrictJson('{"__proto__":{"x":1}}').value).toEqual(JSON.parse('{"__proto__":{"x":1}}'));
    expect(decodeStrictJson('{"s":"a\\"b\\u00e9"}').value).toEqual({ s: 'a"bé' });
  });

  it("YAML: go-yaml's wording, the line of the repeated entry's value, inner mappings first", () => {
    const { value, duplicates } = decodeStrictYaml('a:\n  b: 1\n  b: 2\na:\n  c: 3\nk: 1\nk: x\n');
    expect(value).toEqual({ a: { c: 3 }, k: 'x' });
    expect(duplicates).toEqual([
      { line: 3, key: '"b"' },
      { line: 5, key: '"a"' },
      { line: 7, key: '"k"' },
    ]);
    expect(yamlDuplicateMessage(duplicates.slice(0, 1), true)).toBe(
      'error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: key "b" already set in map',
    );
    expect(warningsOf([yamlDuplicateMessage(duplicates, false), 'unknown field "x"'])).toEqual([
      'line 3: key "b" already set in map',
      'line 5: key "a" already set in map',
      'line 7: key "k" already set in map',
      'unknown field "x"',
    ]);
  });
});

describe('fieldValidation on patch', () => {
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-fvp-'));
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming: createNaming('kubernetes') });
    await core.ready();
    await core.create(
      rs(),
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'p' },
        spec: {
          selector: { matchLabels: { app: 'p' } },
          template: { metadata: { labels: { app: 'p' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      },
      {},
      { user: { username: 'admin', groups: ['system:masters'] } },
    );
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function patchAt(target: ResourceTarget, type: PatchType, body: string, fieldValidation?: FieldValidation, fieldManager?: string) {
    const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, warnings: [] };
    try {
      const decoded = decodePatch(type, Buffer.from(body));
      ctx.decodeReport = decoded.report;
      const r = await core.patch(target, decoded.patch, { ...(fieldValidation ? { fieldValidation } : {}), ...(fieldManager ? { fieldManager } : {}) }, ctx);
      return { object: r.object, warnings: ctx.warnings! };
    } catch (err) {
      return { error: err as StatusError, warnings: ctx.warnings! };
    }
  }
  const patch = (type: PatchType, body: string, fieldValidation?: FieldValidation, fieldManager?: string) =>
    patchAt(rs('p'), type, body, fieldValidation, fieldManager);
  const stored = async () =>
    (await core.get(rs('p'), {}, { user: { username: 'admin', groups: ['system:masters'] } })) as {
      metadata: { resourceVersion: string };
      spec: Record<string, unknown>;
    };

  // One unknown field, `spec.foo`, added by each kind of patch (the Scale has a spec too).
  const ADD_FOO: [PatchType, string][] = [
    ['merge', '{"spec":{"foo":1}}'],
    ['json', '[{"op":"add","path":"/spec/foo","value":1}]'],
    ['strategic', '{"spec":{"foo":1}}'],
  ];

  const MERGE = '{"spec":{"zz":1,"minReadySeconds":1,"minReadySeconds":2,"template":{"spec":{"containers":[{"name":"c","image":"nginx","bogus":1}]}}}}';

  it('merge patch, Warn: repeated keys of the patch, then unknown fields of the result in sorted order', async () => {
    const r = await patch('merge', MERGE);
    expect(r.warnings).toEqual(['duplicate field "spec.minReadySeconds"', 'unknown field "spec.template.spec.containers[0].bogus"', 'unknown field "spec.zz"']);
    expect((r.object!.spec as Record<string, unknown>).zz).toBeUndefined();
  });

  it("merge patch, Strict: the spec's 400 BadRequest listing them all; Ignore: silent", async () => {
    const r = await patch('merge', MERGE, 'Strict');
    expect(r.error?.code).toBe(400);
    expect(r.error?.status.reason).toBe('BadRequest');
    expect(r.error?.status.message).toBe(
      'strict decoding error: duplicate field "spec.minReadySeconds", unknown field "spec.template.spec.containers[0].bogus", unknown field "spec.zz"',
    );
    expect((await patch('merge', MERGE, 'Ignore')).warnings).toEqual([]);
  });

  it('JSON patch: unknown and repeated operation fields, then unknown fields of the result', async () => {
    const body =
      '[{"op":"add","path":"/spec/unknown1","value":"v","foo":"bar"},{"op":"replace","path":"/spec/minReadySeconds","path":"/spec/minReadySeconds","value":3}]';
    const r = await patch('json', body);
    expect(r.warnings).toEqual(['json patch unknown field "[0].foo"', 'json patch duplicate field "[1].path"', 'unknown field "spec.unknown1"']);
  });

  it.each(ADD_FOO)(
    '%s patch adding spec.foo: Strict is a 400 BadRequest Status naming it and stores nothing; Warn warns; Ignore is silent',
    async (type, body) => {
      const before = await stored();
      const strict = await patchAt(rs('p'), type, body, 'Strict');
      expect(strict.error).toBeInstanceOf(StatusError);
      expect(strict.error?.status).toMatchObject({
        kind: 'Status',
        status: 'Failure',
        reason: 'BadRequest',
        code: 400,
        message: 'strict decoding error: unknown field "spec.foo"',
      });
      expect((await stored()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      const warn = await patchAt(rs('p'), type, body, 'Warn');
      expect(warn.error).toBeUndefined();
      expect(warn.warnings).toEqual(['unknown field "spec.foo"']);
      expect((await stored()).spec.foo).toBeUndefined();
      const ignore = await patchAt(rs('p'), type, body, 'Ignore');
      expect([ignore.error, ignore.warnings]).toEqual([undefined, []]);
    },
  );

  it.each(ADD_FOO)("%s patch of /scale adding spec.foo: checked against the Scale's schema like any patch, nothing stored under Strict", async (type, body) => {
    const scale = rs('p', 'scale');
    const withReplicas =
      type === 'json' ? body.replace(']', ',{"op":"replace","path":"/spec/replicas","value":4}]') : body.replace('{"foo"', '{"replicas":4,"foo"');
    const before = await stored();
    const strict = await patchAt(scale, type, withReplicas, 'Strict');
    expect(strict.error?.status).toMatchObject({ reason: 'BadRequest', code: 400, message: 'strict decoding error: unknown field "spec.foo"' });
    expect((await stored()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const warn = await patchAt(scale, type, withReplicas);
    expect(warn.error).toBeUndefined();
    expect(warn.warnings).toEqual(['unknown field "spec.foo"']);
    expect((await stored()).spec.replicas).toBe(4);
    const ignore = await patchAt(scale, type, body.replace('"value":1', '"value":2').replace('"foo":1', '"foo":2'), 'Ignore');
    expect([ignore.error, ignore.warnings]).toEqual([undefined, []]);
    await patchAt(scale, 'merge', '{"spec":{"replicas":1}}');
  });

  it("PUT of /scale: the body is checked against the Scale's schema (upstream's 400 under Strict, nothing stored)", async () => {
    const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, warnings: [] };
    const before = await stored();
    // A fresh body each time: the check drops unknown fields from the one it is given.
    const scale = () => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'p', namespace: 'default' }, spec: { replicas: 5, foo: 1 } });
    const strict = await core.update(rs('p', 'scale'), scale(), { fieldValidation: 'Strict' }, admin).catch((err: StatusError) => err);
    expect((strict as StatusError).status).toMatchObject({
      code: 400,
      message: 'Scale in version "v1" cannot be handled as a Scale: strict decoding error: unknown field "spec.foo"',
    });
    expect((await stored()).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    await core.update(rs('p', 'scale'), scale(), {}, admin);
    expect(admin.warnings).toEqual(['unknown field "spec.foo"']);
    expect((await stored()).spec.replicas).toBe(5);
    await patchAt(rs('p', 'scale'), 'merge', '{"spec":{"replicas":1}}');
  });

  it("/scale: repeated keys of the patch too; Strict's strict errors come before the Scale's validation, as upstream decodes before it validates", async () => {
    const scale = rs('p', 'scale');
    const repeated = await patchAt(scale, 'merge', '{"spec":{"replicas":3,"replicas":2}}', 'Strict');
    expect(repeated.error?.status).toMatchObject({ code: 400, message: 'strict decoding error: duplicate field "spec.replicas"' });
    const negative = await patchAt(scale, 'merge', '{"spec":{"replicas":-1,"foo":1}}', 'Strict');
    expect(negative.error?.status).toMatchObject({ code: 400, message: 'strict decoding error: unknown field "spec.foo"' });
    expect((await stored()).spec.replicas).toBe(1);
  });

  it("apply: repeated keys are upstream's 400 under Strict and one warning per line under Warn", async () => {
    const body = 'apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: p\n  labels:\n    tier: a\n    tier: b\n';
    const strict = await patch('apply', body, 'Strict', 'mgr');
    expect(strict.error?.code).toBe(400);
    expect(strict.error?.status.message).toBe(
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "tier" already set in map',
    );
    const warn = await patch('apply', body, undefined, 'mgr');
    expect(warn.warnings).toEqual(['line 7: key "tier" already set in map']);
    expect(warn.object?.metadata?.labels?.tier).toBe('b');
  });
});
