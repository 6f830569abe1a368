import { createLogger } from '../../src/server/logging';
import { goDuration } from '../../src/gateway/steps/request-log';

describe('server log', () => {
  it('writes text lines with klog-style fields, filtered by verbosity', () => {
    const lines: string[] = [];
    const log = createLogger({ format: 'text', verbosity: 2, write: (l) => lines.push(l) });
    log.info('ready');
    log.verbose(2, 'HTTP', { verb: 'GET', URI: '/api', resp: 200, userAgent: undefined });
    log.verbose(3, 'hidden');
    expect(lines).toEqual(['keelson: ready\n', 'keelson: HTTP verb="GET" URI="/api" resp=200\n']);
    expect(log.enabled(2)).toBe(true);
    expect(log.enabled(3)).toBe(false);
  });

  it('writes JSON lines with ts, v, the fields and msg', () => {
    const chunks: string[] = [];
    const log = createLogger({ format: 'json', verbosity: 3, write: (l) => chunks.push(l) });
    log.verbose(3, 'HTTP', { verb: 'GET', resp: 200 });
    log.verbose(4, 'hidden');
    expect(chunks).toHaveLength(1);
    const line = JSON.parse(chunks[0]!);
    expect(line).toEqual({ ts: expect.any(Number), v: 3, verb: 'GET', resp: 200, msg: 'HTTP' });
    expect(Object.keys(line)).toEqual(['ts', 'v', 'verb', 'resp', 'msg']);
  });

  it("writes latencies as Go's durations", () => {
    expect(goDuration(2.5)).toBe('2.5ms');
    expect(goDuration(0.2505)).toBe('250.5µs');
    expect(goDuration(1500)).toBe('1.5s');
  });
});
