/**
 * The gRPC door answers in the HTTPS door's order (src/gateway/pipeline.ts: authentication,
 * then authorization, then the handler reads the body): 401 before 403 before 400. A caller
 * without credentials gets UNAUTHENTICATED from every method whatever its request holds, and
 * learns nothing about what a request must hold. Every method of the service definition is
 * called with raw bytes, so a method added later is covered without touching this file.
 */
import * as grpc from '@grpc/grpc-js';
import type { CoreApi, ResourceTarget } from '../../src/core/api';
import { createAuthenticator, parseTokenFile, tokenFileAuthenticator } from '../../src/authn';
import { CoreService } from '../../src/gen/keelson/core/v1/core';
import { createGrpcCoreClient, startGrpcCoreServer, type GrpcCoreServer } from '../../src/grpc';
import { fromGrpcError } from '../../src/grpc/errors';
import { GrpcCode, type StatusError, methodNotSupported } from '../../src/status';
import { createTestPki, type TestPki } from './fixtures/certs';

/** A core that refuses everything: no call in these tests should get as far as the core. */
function refusingCore(): CoreApi {
  const refuse = () => Promise.reject(methodNotSupported({ group: '', resource: 'configmaps' }, 'x'));
  return { get: refuse, list: refuse, watch: refuse, create: refuse, update: refuse, patch: refuse, delete: refuse, deleteCollection: refuse };
}

const METHODS = Object.entries(CoreService).map(([name, method]) => ({ name, path: method.path, streaming: method.responseStream }));

/** Request bodies no method accepts: no message at all, and bytes that are not protobuf. */
const BAD_BODIES: ReadonlyArray<readonly [string, Buffer]> = [
  ['an empty request', Buffer.alloc(0)],
  ['bytes with an invalid wire type', Buffer.from([0x0f, 0xff, 0xff, 0xff, 0xff, 0x07])],
  ['a field longer than the message', Buffer.from([0x0a, 0x7f, 0x61, 0x62])],
];

const CASES = METHODS.flatMap((method) => BAD_BODIES.map(([body, bytes]) => [method.name, body, method, bytes] as const));

interface Answer {
  code: number;
  details: string;
  error: StatusError;
}

/** Calls `path` with `body` as the raw request bytes and resolves with the status the call ended with. */
function callRaw(client: grpc.Client, method: (typeof METHODS)[number], body: Buffer, metadata = new grpc.Metadata()): Promise<Answer> {
  const identity = (bytes: Buffer) => bytes;
  const answer = (err: grpc.ServiceError): Answer => ({ code: err.code, details: err.details, error: fromGrpcError(err).error });
  return new Promise((resolve, reject) => {
    if (method.streaming) {
      const stream = client.makeServerStreamRequest(method.path, identity, identity, body, metadata, {});
      stream.on('data', () => reject(new Error(`${method.path} sent a message`)));
      stream.on('error', (err: grpc.ServiceError) => resolve(answer(err)));
      stream.on('end', () => reject(new Error(`${method.path} ended OK`)));
      return;
    }
    client.makeUnaryRequest(method.path, identity, identity, body, metadata, {}, (err) => {
      if (err) resolve(answer(err));
      else reject(new Error(`${method.path} answered OK`));
    });
  });
}

function bearer(token: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

describe('gRPC door: authentication and authorization before request validation', () => {
  let pki: TestPki;
  const servers: GrpcCoreServer[] = [];
  const clients: grpc.Client[] = [];

  beforeAll(async () => {
    pki = await createTestPki();
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await s.close();
  });

  /**
   * A door whose authorizer allows authenticated users and nobody else; the token `admin-token`
   * is user admin, and the test PKI's client certificate is the gateway (allowed to act for others).
   */
  async function startDoor(anonymous: boolean): Promise<GrpcCoreServer> {
    const tokens = tokenFileAuthenticator(parseTokenFile('admin-token,admin,uid-admin,admins\n', 'tokens.csv'));
    const server = await startGrpcCoreServer(refusingCore(), {
      address: '127.0.0.1:0',
      tls: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca },
      authentication: {
        authenticator: createAuthenticator({ certificates: true, tokens: [tokens], anonymous }),
        authorize: async (a) => (a.user.groups.includes('system:authenticated') ? { decision: 'allow' } : { decision: 'noOpinion' }),
        proxyUsers: ['keelson-gateway'],
      },
    });
    servers.push(server);
    return server;
  }

  function rawClient(server: GrpcCoreServer, cert?: { cert: string; key: string }): grpc.Client {
    const credentials = grpc.credentials.createSsl(Buffer.from(pki.ca), cert ? Buffer.from(cert.key) : null, cert ? Buffer.from(cert.cert) : null);
    const client = new grpc.Client(server.address, credentials, { 'grpc.ssl_target_name_override': 'localhost' });
    clients.push(client);
    return client;
  }

  it('enumerates every method of the service definition', () => {
    expect(METHODS.map((m) => m.name)).toEqual(expect.arrayContaining(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deleteCollection']));
  });

  describe('anonymous requests disabled', () => {
    let server: GrpcCoreServer;
    beforeAll(async () => {
      server = await startDoor(false);
    });

    it.each(CASES)('%s with %s and no credentials: UNAUTHENTICATED, the bare Unauthorized status', async (_name, _body, method, bytes) => {
      const answer = await callRaw(rawClient(server), method, bytes);
      expect(answer.code).toBe(GrpcCode.UNAUTHENTICATED);
      expect(answer.details).toBe('Unauthorized');
      // Nothing of the request in the Status either: upstream's bare 401, with no details.
      expect(answer.error.status).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    });

    it.each(CASES)('%s with %s and a wrong token: UNAUTHENTICATED', async (_name, _body, method, bytes) => {
      const answer = await callRaw(rawClient(server), method, bytes, bearer('wrong-token'));
      expect(answer.code).toBe(GrpcCode.UNAUTHENTICATED);
      expect(answer.details).toBe('Unauthorized');
    });

    it('a well-formed request without credentials: UNAUTHENTICATED too', async () => {
      const client = createGrpcCoreClient(server.address, { tls: { ca: pki.ca, serverName: 'localhost' } });
      const target: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' };
      const err = await client.get(target, {}, { user: { username: 'claimed-admin', groups: ['system:masters'] } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      client.close();
      expect((err as StatusError).status).toMatchObject({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    });

    it.each(CASES)('%s with %s from an authenticated, authorized caller: INVALID_ARGUMENT', async (_name, _body, method, bytes) => {
      const answer = await callRaw(rawClient(server), method, bytes, bearer('admin-token'));
      expect(answer.code).toBe(GrpcCode.INVALID_ARGUMENT);
      expect(answer.error.status.code).toBe(400);
    });

    it.each(CASES)('%s with %s from a gateway: INVALID_ARGUMENT (it is authenticated; the request names no user)', async (_name, _body, method, bytes) => {
      const answer = await callRaw(rawClient(server, pki.client), method, bytes);
      expect(answer.code).toBe(GrpcCode.INVALID_ARGUMENT);
    });
  });

  describe('anonymous requests enabled (the default)', () => {
    let server: GrpcCoreServer;
    beforeAll(async () => {
      server = await startDoor(true);
    });

    it.each(CASES)(
      '%s with %s from an anonymous caller it does not authorize: PERMISSION_DENIED, as HTTPS answers 403 before 400',
      async (_name, _body, method, bytes) => {
        const answer = await callRaw(rawClient(server), method, bytes);
        expect(answer.code).toBe(GrpcCode.PERMISSION_DENIED);
        expect(answer.error.status).toMatchObject({ code: 403, reason: 'Forbidden' });
        expect(answer.details).toContain('User "system:anonymous" cannot');
      },
    );

    it.each(CASES)('%s with %s from an authorized caller: INVALID_ARGUMENT', async (_name, _body, method, bytes) => {
      const answer = await callRaw(rawClient(server), method, bytes, bearer('admin-token'));
      expect(answer.code).toBe(GrpcCode.INVALID_ARGUMENT);
    });
  });
});
