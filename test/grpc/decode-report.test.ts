/**
 * fieldValidation through the gRPC door: the strict decoder's report travels with the request,
 * so a body with repeated and unknown keys gets the same warnings and Strict errors from a core
 * behind gRPC as from the in-process core.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type Core, type CoreApi, type DecodeReport, type RequestContext, type ResourceTarget } from '../../src/core';
import { createGrpcCoreClient, startGrpcCoreServer, type GrpcCoreClient, type GrpcCoreServer } from '../../src/grpc';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { decodeObject, decodePatch } from '../../src/gateway/body';
import { JSON_MEDIA_TYPE, YAML_MEDIA_TYPE, gatewayCodecs } from '../../src/gateway/codecs';
import type { StatusError } from '../../src/status';

const naming = createNaming('kubernetes');
const codecs = gatewayCodecs(naming);
const cm = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name });

let dir: string;
let core: Core;
let server: GrpcCoreServer;
let client: GrpcCoreClient;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-grpc-report-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  await core.ready();
  server = await startGrpcCoreServer(core, { address: '127.0.0.1:0', authentication: 'trust-caller' });
  client = createGrpcCoreClient(server.address);
});

afterAll(async () => {
  client.close();
  await server.close();
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

function ctxWith(report: DecodeReport | undefined): RequestContext & { warnings: string[] } {
  return { user: { username: 'admin', groups: ['system:masters'] }, warnings: [], ...(report ? { decodeReport: report } : {}) };
}

/** Create `body` (JSON or YAML text) through `api` as the gateway would, returning the warnings or the error. */
async function create(api: CoreApi, mediaType: string, body: string, name: string, fieldValidation?: 'Strict') {
  const decoded = decodeObject(codecs.get(mediaType)!, Buffer.from(body.replace('NAME', name)));
  const ctx = ctxWith(decoded.report);
  try {
    await api.create(cm(), decoded.object, fieldValidation ? { fieldValidation } : {}, ctx);
    return { warnings: ctx.warnings };
  } catch (err) {
    return { error: (err as StatusError).status.message };
  }
}

const JSON_BODY = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"NAME","bogus":1},"data":{"a":"1","a":"2"},"extra":true}';
const YAML_BODY = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME\ndata:\n  a: "1"\n  a: "2"\nextra: true\n';

describe('the decode report across the gRPC door', () => {
  it.each([
    ['JSON', JSON_MEDIA_TYPE, JSON_BODY],
    ['YAML', YAML_MEDIA_TYPE, YAML_BODY],
  ])('%s bodies: the same warnings and Strict errors as in process', async (_label, mediaType, body) => {
    const local = await create(core, mediaType, body, `local-${_label.toLowerCase()}`);
    const remote = await create(client, mediaType, body, `remote-${_label.toLowerCase()}`);
    expect(local.warnings!.length).toBeGreaterThanOrEqual(2);
    expect(remote).toEqual(local);
    const strictLocal = await create(core, mediaType, body, 'strict-local', 'Strict');
    const strictRemote = await create(client, mediaType, body, 'strict-remote', 'Strict');
    expect(strictLocal.error).toMatch(/strict decoding error/);
    expect(strictRemote.error!.replace('strict-remote', 'strict-local')).toBe(strictLocal.error);
  });

  it("patches: the patch document's own strict errors arrive too", async () => {
    await core.create(cm(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p' } }, {}, ctxWith(undefined));
    const { patch, report } = decodePatch('merge', Buffer.from('{"data":{"x":"1","x":"2"}}'));
    const local = ctxWith(report);
    await core.patch(cm('p'), patch, {}, local);
    const remote = ctxWith(report);
    await client.patch(cm('p'), patch, {}, remote);
    expect(local.warnings).toEqual(['duplicate field "data.x"']);
    expect(remote.warnings).toEqual(local.warnings);
  });
});
