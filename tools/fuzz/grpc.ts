/**
 * The same generated requests through the gRPC door: each request's path becomes a
 * ResourceTarget (sometimes mangled: unknown resources, bad names, stray subresources), its body
 * the Unknown's raw bytes or the Patch's body exactly as generated (whatever the content type:
 * the door takes JSON, so YAML, CBOR and random bytes arrive undecodable), and the write options
 * random (bad dryRun values, long field managers, every fieldValidation). A server error is an
 * answer whose Status code is 500 or more, or a transport failure.
 */
import * as grpc from '@grpc/grpc-js';
import { CoreClient, FieldValidation, PatchType, type ResourceTarget, type WriteOptions } from '../../src/gen/keelson/core/v1/core';
import { fromGrpcError } from '../../src/grpc/errors';
import { clientCredentials } from '../../src/grpc/tls';
import { fuzzRequest, rng, seedObjects, type FuzzRequest } from './generate';
import { FuzzRecorder, type FuzzReport } from './run';

export interface GrpcTarget {
  address: string;
  pid: number;
  tls: { ca: string; cert: string; key: string };
}

/** `/api/v1/namespaces/ns/configmaps/name` → its target. */
export function targetOf(path: string): ResourceTarget {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  let group = '';
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    version = parts[1] ?? 'v1';
    rest = parts.slice(2);
  } else {
    group = parts[1] ?? '';
    version = parts[2] ?? 'v1';
    rest = parts.slice(3);
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  return {
    group,
    version,
    resource: rest[0] ?? '',
    ...(namespace ? { namespace } : {}),
    ...(rest[1] ? { name: rest[1] } : {}),
    ...(rest[2] ? { subresource: rest[2] } : {}),
  };
}

const ADMIN = { username: 'admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };

const PATCH_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': PatchType.PATCH_TYPE_JSON,
  'application/merge-patch+json': PatchType.PATCH_TYPE_MERGE,
  'application/strategic-merge-patch+json': PatchType.PATCH_TYPE_STRATEGIC,
  'application/apply-patch+yaml': PatchType.PATCH_TYPE_APPLY,
};

function mangle(target: ResourceTarget, r: () => number): ResourceTarget {
  const roll = r();
  if (roll < 0.9) return target;
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const t = { ...target };
  switch (pick(['resource', 'name', 'namespace', 'subresource', 'group'])) {
    case 'resource':
      t.resource = pick(['', 'nope', 'pods/../secrets', 'x'.repeat(300)]);
      break;
    case 'name':
      t.name = pick(['', '..', 'UPPER', 'a/b', '\u0000', 'x'.repeat(300)]);
      break;
    case 'namespace':
      t.namespace = pick(['', 'Bad_NS', 'missing', 'x'.repeat(300)]);
      break;
    case 'subresource':
      t.subresource = pick(['status', 'scale', 'binding', 'exec', 'x']);
      break;
    case 'group':
      t.group = pick(['apps', 'nope.example.com', 'rbac.authorization.k8s.io']);
      break;
  }
  return t;
}

function options(r: () => number): WriteOptions {
  const roll = r();
  return {
    dryRun: roll < 0.1 ? ['All'] : roll < 0.15 ? ['Nope'] : roll < 0.17 ? ['All', 'All'] : [],
    fieldManager: r() < 0.1 ? 'm'.repeat(Math.floor(r() * 300)) : r() < 0.5 ? 'fuzz' : undefined,
    fieldValidation: [
      FieldValidation.FIELD_VALIDATION_UNSPECIFIED,
      FieldValidation.FIELD_VALIDATION_IGNORE,
      FieldValidation.FIELD_VALIDATION_WARN,
      FieldValidation.FIELD_VALIDATION_STRICT,
    ][Math.floor(r() * 4)]!,
    ...(r() < 0.1 ? { force: true } : {}),
  };
}

function unary<Req, Res>(
  fn: (req: Req, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown,
  req: Req,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    fn(req, new grpc.Metadata(), { deadline: Date.now() + 60_000 }, (err, res) => (err ? reject(err) : resolve(res!)));
  });
}

function send(client: CoreClient, req: FuzzRequest, r: () => number): Promise<unknown> {
  const target = mangle(targetOf(req.path), r);
  const opts = options(r);
  if (process.env.KEELSON_FUZZ_TRACE)
    process.stderr.write(`  ${req.method} ${JSON.stringify(target)} ${JSON.stringify({ ...opts, fieldManager: opts.fieldManager?.slice(0, 20) })}\n`);
  // The admin certificate's own identity; only a gateway's certificate may name someone else.
  const caller = { user: ADMIN, userAgent: 'keelson-fuzz' };
  const object = { typeMeta: { apiVersion: r() < 0.9 ? '' : 'v0', kind: r() < 0.9 ? '' : 'Nope' }, raw: req.body, contentType: 'application/json' };
  if (req.method === 'POST') return unary(client.create.bind(client), { target, object, options: opts, caller });
  if (req.method === 'PUT') return unary(client.update.bind(client), { target, object, options: opts, caller });
  const type = PATCH_TYPES[req.contentType] ?? PatchType.PATCH_TYPE_UNSPECIFIED;
  return unary(client.patch.bind(client), { target, patch: { type, body: req.body }, options: opts, caller });
}

/** The door-specific choices (target mangling, options) for request `i`: its own sequence, so any request replays alone. */
function doorRandom(seed: number, i: number): () => number {
  return rng((seed * 7919 + 1) * 1_000_003 + i);
}

export function grpcFuzzClient(target: Pick<GrpcTarget, 'address' | 'tls'>): CoreClient {
  return new CoreClient(target.address, clientCredentials({ ca: target.tls.ca, cert: target.tls.cert, key: target.tls.key, serverName: 'localhost' }), {
    'grpc.max_receive_message_length': -1,
  });
}

export async function runGrpcFuzz(
  target: GrpcTarget,
  opts: { seed: number; count: number; only?: number[]; onProgress?: (done: number) => void },
): Promise<FuzzReport> {
  const client = grpcFuzzClient(target);
  for (const seed of seedObjects()) {
    const req: FuzzRequest = { cls: 'seed', method: 'POST', path: seed.path, contentType: 'application/json', body: Buffer.from(JSON.stringify(seed.body)) };
    await unary(client.create.bind(client), {
      target: targetOf(seed.path),
      object: { typeMeta: { apiVersion: '', kind: '' }, raw: req.body, contentType: 'application/json' },
      options: { dryRun: [], fieldValidation: FieldValidation.FIELD_VALIDATION_UNSPECIFIED },
      caller: { user: ADMIN },
    }).catch(() => undefined);
  }
  const recorder = new FuzzRecorder(target.pid);
  const indexes = opts.only ?? Array.from({ length: opts.count }, (_, i) => i);
  for (const [done, i] of indexes.entries()) {
    const req = fuzzRequest(opts.seed, i);
    const started = performance.now();
    let code = 200;
    let message = '';
    try {
      await send(client, req, doorRandom(opts.seed, i));
    } catch (err) {
      const status = fromGrpcError(err).error.status;
      code = status.code;
      message = status.message ?? '';
      if ((err as grpc.ServiceError).code === grpc.status.UNAVAILABLE && !status.reason) code = 0;
    }
    if (process.env.KEELSON_FUZZ_TRACE) process.stderr.write(`${i} ${req.cls} ${code} ${message.slice(0, 160)}\n`);
    if (!recorder.record(i, req.cls, performance.now() - started, code, message)) break;
    opts.onProgress?.(done + 1);
  }
  client.close();
  return recorder.finish();
}
