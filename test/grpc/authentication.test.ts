/**
 * The gRPC door authenticates every call with the server's chain: bearer tokens in the
 * `authorization` metadata and client certificates checked against the client CA. The user a
 * request names is believed only from a caller allowed to act for others (a gateway); anyone
 * else is who they authenticated as, and bad credentials are 401 Unauthorized.
 */
import type { CoreApi, RequestContext, ResourceTarget, UserInfo } from '../../src/core/api';
import { createAuthenticator, parseTokenFile, tokenFileAuthenticator } from '../../src/authn';
import { createGrpcCoreClient, startGrpcCoreServer, type GrpcCoreClient, type GrpcCoreServer } from '../../src/grpc';
import { StatusError, methodNotSupported } from '../../src/status';
import { createTestPki, type TestPki } from './fixtures/certs';

const target: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' };
const claimed: RequestContext = { user: { username: 'claimed-admin', groups: ['system:masters'] } };

/** A core that answers every get with the user it was called as. */
function whoAmI(): CoreApi {
  const refuse = () => Promise.reject(methodNotSupported({ group: '', resource: 'configmaps' }, 'x'));
  return {
    get: async (_t, _o, ctx) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { user: JSON.stringify(ctx.user) } }),
    list: refuse,
    watch: refuse,
    create: refuse,
    update: refuse,
    patch: refuse,
    delete: refuse,
    deleteCollection: refuse,
  };
}

describe('gRPC door authentication', () => {
  let pki: TestPki;
  let foreign: TestPki;
  let server: GrpcCoreServer;
  const clients: GrpcCoreClient[] = [];
  const rejections: string[] = [];

  beforeAll(async () => {
    pki = await createTestPki();
    foreign = await createTestPki('another-ca');
    const tokens = tokenFileAuthenticator(parseTokenFile('bob-token,bob,uid-bob,dev\n', 'tokens.csv'));
    server = await startGrpcCoreServer(whoAmI(), {
      address: '127.0.0.1:0',
      tls: { key: pki.server.key, cert: pki.server.cert, ca: pki.ca },
      authentication: {
        authenticator: createAuthenticator({ certificates: true, tokens: [tokens], anonymous: true }),
        // Anyone may get; only bob may not create (the core behind answers every create with its own error).
        authorize: async (a) => (a.verb === 'create' && a.user.username === 'bob' ? { decision: 'noOpinion' } : { decision: 'allow' }),
        proxyUsers: ['keelson-gateway'],
        onRejected: (reason) => rejections.push(reason),
      },
    });
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  function client(options: { token?: string; cert?: { cert: string; key: string } } = {}): GrpcCoreClient {
    const c = createGrpcCoreClient(server.address, {
      tls: { ca: pki.ca, serverName: 'localhost', ...(options.cert ?? {}) },
      ...(options.token ? { token: options.token } : {}),
    });
    clients.push(c);
    return c;
  }

  async function userSeen(c: GrpcCoreClient): Promise<UserInfo> {
    const obj = await c.get(target, {}, claimed);
    return JSON.parse((obj.data as { user: string }).user) as UserInfo;
  }

  it("a bearer token: the token's user, whatever user the request claims", async () => {
    expect(await userSeen(client({ token: 'bob-token' }))).toEqual({ username: 'bob', uid: 'uid-bob', groups: ['dev', 'system:authenticated'] });
  });

  it('a client certificate from the client CA: its CN and O', async () => {
    expect(await userSeen(client({ cert: await pki.issueClient('CN=alice, O=dev') }))).toEqual({ username: 'alice', groups: ['dev', 'system:authenticated'] });
  });

  it('no credentials: anonymous, not the claimed user', async () => {
    expect(await userSeen(client())).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('a gateway allowed to act for others: the user the request names', async () => {
    expect(await userSeen(client({ cert: pki.client }))).toEqual(claimed.user);
  });

  it('a wrong token: 401 Unauthorized, the reason only in the log', async () => {
    const err = await client({ token: 'wrong-token' })
      .get(target, {}, claimed)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).status).toMatchObject({ code: 401, reason: 'Unauthorized', message: 'Unauthorized' });
    expect(rejections).toEqual(['invalid bearer token']);
  });

  it('a certificate from another CA naming a gateway is not a gateway: the call is anonymous', async () => {
    expect(await userSeen(client({ cert: foreign.client }))).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it("authorizes each call for the user it runs as, with upstream's 403", async () => {
    const err = await client({ token: 'bob-token' })
      .create({ ...target, name: undefined }, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, {}, claimed)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as StatusError).status).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: 'configmaps is forbidden: User "bob" cannot create resource "configmaps" in API group "" in the namespace "default"',
    });
  });

  it('watches are authenticated the same way', async () => {
    const err = await client({ token: 'wrong-token' })
      .watch(target, {}, claimed)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as StatusError).status).toMatchObject({ code: 401, reason: 'Unauthorized' });
  });
});
