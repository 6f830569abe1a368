import { Registry } from 'prom-client';
import { FastCounter, FastHistogram } from '../../src/metrics/series';

describe('request-path series', () => {
  it('expose counters and histograms in the Prometheus text format, buckets cumulative', async () => {
    const registry = new Registry();
    const counter = new FastCounter('x_total', 'Things.', ['verb', 'code'], registry);
    const histogram = new FastHistogram('x_seconds', 'Latency.', ['verb'], [0.1, 1], registry);
    const get = counter.labels({ verb: 'GET', code: '200' });
    get.inc();
    get.inc(2);
    counter.labels({ verb: 'GET', code: '200' }).inc();
    counter.labels({ verb: 'POST', code: '201' }).inc();
    const h = histogram.labels({ verb: 'GET' });
    for (const v of [0.05, 0.1, 0.5, 3]) h.observe(v);
    expect(await registry.metrics()).toBe(
      [
        '# HELP x_total Things.',
        '# TYPE x_total counter',
        'x_total{verb="GET",code="200"} 4',
        'x_total{verb="POST",code="201"} 1',
        '',
        '# HELP x_seconds Latency.',
        '# TYPE x_seconds histogram',
        'x_seconds_bucket{le="0.1",verb="GET"} 2',
        'x_seconds_bucket{le="1",verb="GET"} 3',
        'x_seconds_bucket{le="+Inf",verb="GET"} 4',
        'x_seconds_sum{verb="GET"} 3.65',
        'x_seconds_count{verb="GET"} 4',
        '',
      ].join('\n'),
    );
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain('x_total{');
  });
});
