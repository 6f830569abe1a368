import { defaultCodecs } from '../../../src/gateway/codecs';
import { recoverStep } from '../../../src/gateway/steps/recover';
import { badRequest } from '../../../src/status';
import { fakeExchange } from '../support/http';

describe('recover step', () => {
  it('writes a thrown StatusError as its Status', async () => {
    const { exchange, response } = fakeExchange({ url: '/' });
    await recoverStep({ codecs: defaultCodecs })(async () => {
      throw badRequest('nope');
    })(exchange);
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'nope', reason: 'BadRequest', code: 400 });
  });

  it('reports unexpected errors and answers 500', async () => {
    const seen: unknown[] = [];
    const { exchange, response } = fakeExchange({ url: '/' });
    await recoverStep({ codecs: defaultCodecs, onUnexpectedError: (e) => seen.push(e) })(async () => {
      throw new TypeError('bug');
    })(exchange);
    expect(response.status).toBe(500);
    expect(seen).toHaveLength(1);
  });

  it('only ends a response whose head already went out', async () => {
    const { exchange, response } = fakeExchange({ url: '/' });
    await recoverStep({ codecs: defaultCodecs })(async (ex) => {
      ex.response.writeHead(200);
      ex.response.write('partial');
      throw badRequest('late');
    })(exchange);
    expect(response.status).toBe(200);
    expect(response.text).toBe('partial');
    expect(response.ended).toBe(true);
  });
});
