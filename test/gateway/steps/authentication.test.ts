import { authenticateCertificate, authenticationStep } from '../../../src/gateway/steps/authentication';
import { fakeExchange } from '../support/http';

describe('authentication step', () => {
  it('maps a verified certificate to CN and O groups plus system:authenticated', () => {
    expect(authenticateCertificate({ verified: true, commonName: 'admin', organizations: ['system:masters'] })).toEqual({
      outcome: 'authenticated',
      user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    });
  });

  it('treats a request without a certificate as anonymous', () => {
    expect(authenticateCertificate(undefined)).toEqual({
      outcome: 'anonymous',
      user: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
    });
  });

  it('rejects a certificate that did not verify, and one not meant for client auth', () => {
    expect(authenticateCertificate({ verified: false, verifyError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'x', organizations: [] }).outcome).toBe('rejected');
    expect(authenticateCertificate({ verified: true, commonName: 'x', organizations: [], extKeyUsage: ['1.3.6.1.5.5.7.3.1'] }).outcome).toBe('rejected');
    expect(authenticateCertificate({ verified: true, commonName: 'x', organizations: [], extKeyUsage: ['1.3.6.1.5.5.7.3.2'] }).outcome).toBe('authenticated');
  });

  it('answers 401 Unauthorized for a certificate not signed by the CA', async () => {
    const { exchange } = fakeExchange({ url: '/api', cert: { verified: false, commonName: 'mallory', organizations: ['system:masters'] } });
    const next = jest.fn();
    await expect(authenticationStep(next)(exchange)).rejects.toMatchObject({
      status: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 },
    });
    expect(next).not.toHaveBeenCalled();
  });

  it('sets exchange.user and continues', async () => {
    const { exchange } = fakeExchange({ url: '/api', cert: { verified: true, commonName: 'alice', organizations: ['dev', 'ops'] } });
    await authenticationStep(async () => {})(exchange);
    expect(exchange.user).toEqual({ username: 'alice', groups: ['dev', 'ops', 'system:authenticated'] });
  });
});
