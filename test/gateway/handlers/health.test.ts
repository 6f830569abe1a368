import { type HealthCheck, healthReport, serveHealthCheck } from '../../../src/gateway/handlers/health';
import { fakeExchange } from '../support/http';

const ok = (name: string): HealthCheck => ({ name, check: () => {} });
const failing = (name: string): HealthCheck => ({
  name,
  check: async () => {
    throw new Error('not yet');
  },
});
const q = (s: string) => new URLSearchParams(s);

describe('health endpoints', () => {
  it('answers ok, or one line per check with verbose', async () => {
    const checks = [ok('ping'), ok('log'), ok('etcd')];
    expect(await healthReport('livez', checks, q(''))).toEqual({ status: 200, body: 'ok', failures: [] });
    expect((await healthReport('livez', checks, q('verbose'))).body).toBe('[+]ping ok\n[+]log ok\n[+]etcd ok\nlivez check passed\n');
  });

  it('skips excluded checks and warns about unknown ones', async () => {
    const report = await healthReport('readyz', [ok('ping'), failing('etcd')], q('verbose&exclude=etcd&exclude=nope&exclude=alsonope'));
    expect(report.status).toBe(200);
    expect(report.body).toBe(
      '[+]ping ok\n[+]etcd excluded: ok\nwarn: some health checks cannot be excluded: no matches for "alsonope","nope"\nreadyz check passed\n',
    );
  });

  it('fails with 500, always verbose, reasons withheld', async () => {
    const report = await healthReport('readyz', [ok('ping'), failing('core-ready')], q(''));
    expect(report).toEqual({
      status: 500,
      body: '[+]ping ok\n[-]core-ready failed: reason withheld\nreadyz check failed\n',
      failures: ['[-]core-ready failed: not yet'],
    });
  });

  it('serves a single check with its reason', async () => {
    const good = fakeExchange({ url: '/livez/ping' });
    await serveHealthCheck(good.exchange, ok('ping'));
    expect([good.response.status, good.response.text]).toEqual([200, 'ok']);
    const bad = fakeExchange({ url: '/readyz/x' });
    await serveHealthCheck(bad.exchange, failing('x'));
    expect([bad.response.status, bad.response.text]).toEqual([500, 'internal server error: not yet\n']);
  });
});
