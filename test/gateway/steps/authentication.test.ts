import { authenticationStep, bearerTokenOf } from '../../../src/gateway/steps/authentication';
import { createAuthenticator, parseTokenFile, tokenFileAuthenticator } from '../../../src/authn';
import { fakeExchange } from '../support/http';

const UNAUTHORIZED = { status: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 } };

describe('authentication step', () => {
  it('answers 401 Unauthorized for a certificate not signed by the CA, and says why only to the log', async () => {
    const { exchange } = fakeExchange({
      url: '/api',
      cert: { verified: false, verifyError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'mallory', organizations: ['system:masters'] },
    });
    const next = jest.fn();
    const reasons: string[] = [];
    await expect(authenticationStep({ onRejected: (r) => reasons.push(r) })(next)(exchange)).rejects.toMatchObject(UNAUTHORIZED);
    expect(next).not.toHaveBeenCalled();
    expect(reasons).toEqual(['x509: UNABLE_TO_VERIFY_LEAF_SIGNATURE']);
  });

  it('sets exchange.user and continues', async () => {
    const { exchange } = fakeExchange({ url: '/api', cert: { verified: true, commonName: 'alice', organizations: ['dev', 'ops'] } });
    await authenticationStep()(async () => {})(exchange);
    expect(exchange.user).toEqual({ username: 'alice', groups: ['dev', 'ops', 'system:authenticated'] });
  });

  it('treats a request without credentials as anonymous', async () => {
    const { exchange } = fakeExchange({ url: '/api' });
    await authenticationStep()(async () => {})(exchange);
    expect(exchange.user).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('authenticates the bearer token of the Authorization header; an unknown one is 401, not anonymous', async () => {
    const tokens = tokenFileAuthenticator(parseTokenFile('secret-token,bob,uid-bob,"dev,ops"\n', 'tokens.csv'));
    const step = authenticationStep({ authenticator: createAuthenticator({ certificates: true, tokens: [tokens], anonymous: true }) });
    const good = fakeExchange({ url: '/api', headers: { authorization: 'Bearer secret-token' } }).exchange;
    await step(async () => {})(good);
    expect(good.user).toEqual({ username: 'bob', uid: 'uid-bob', groups: ['dev', 'ops', 'system:authenticated'] });
    const bad = fakeExchange({ url: '/api', headers: { authorization: 'Bearer wrong-token' } }).exchange;
    await expect(step(async () => {})(bad)).rejects.toMatchObject(UNAUTHORIZED);
  });

  it('reads tokens as upstream: the Bearer scheme in any case, other schemes are not tokens', () => {
    expect(bearerTokenOf('Bearer abc')).toBe('abc');
    expect(bearerTokenOf('bearer abc')).toBe('abc');
    expect(bearerTokenOf('  Bearer abc  ')).toBe('abc');
    expect(bearerTokenOf('Bearer abc extra')).toBe('abc');
    expect(bearerTokenOf('Basic YWxpY2U6cHc=')).toBeUndefined();
    expect(bearerTokenOf('Bearer')).toBeUndefined();
    expect(bearerTokenOf('Bearer  abc')).toBeUndefined();
    expect(bearerTokenOf(undefined)).toBeUndefined();
  });
});
