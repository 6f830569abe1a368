/**
 * Scenario 10: what the operations features cost per request, in process and socket-free (the
 * gateway's handler over an in-process core on the embedded store): a cached GET of one
 * ConfigMap as the admin, through the plain pipeline (the reference), with `/metrics`'
 * instrumentation, and with metrics plus auditing at Metadata level into a real log file, then
 * plus the `-v=3` request line. CPU per request, measured side by side in one run; the share
 * is the extra CPU over the plain GET.
 */
import { createCore, type RequestContext } from '../../../src/core';
import { type AuditEvent, parseAuditPolicy } from '../../../src/gateway';
import { gatewayOverCore } from '../core-gateway';
import { ServerMetrics } from '../../../src/metrics';
import { openAuditLog } from '../../../src/server/audit-log';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { systemClock } from '../../../src/clock';
import type { GatewayResponse } from '../../../src/gateway';
import type { GatewayRequest } from '../../../src/gateway';
import type { Context } from '../context';
import { micros } from '../report';
import { cpuPerCall } from './authentication';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

/** A response that keeps nothing: the bench measures the server side only. */
export function nullResponse(): GatewayResponse {
  let status = 200;
  let sent = false;
  return {
    get headersSent() {
      return sent;
    },
    get statusCode() {
      return status;
    },
    setHeader: () => {},
    writeHead: (s) => void (status = s),
    flushHeaders: () => void (sent = true),
    write: () => ((sent = true), true),
    drain: async () => {},
    end: () => void (sent = true),
    abort: () => {},
    whenFlushed: () => undefined,
  };
}

export async function runOperations(ctx: Context): Promise<void> {
  const naming = createNaming('kubernetes');
  const dir = await ctx.tmpDir('operations');
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  const auditLog = openAuditLog({ path: `${dir}/audit.log`, maxSizeMb: 100, maxBackups: 1, maxAgeDays: 0, clock: systemClock });
  try {
    await core.ready();
    await core.create(
      { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'bench' }, data: { k: 'v' } },
      {},
      admin,
    );
    const policy = parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n', naming);
    let lines = 0;
    const limits = { maxReadOnly: 400, maxMutating: 200, requestTimeoutMs: 60_000 };
    const variants: Array<[string, ReturnType<typeof gatewayOverCore>]> = [
      ['plain pipeline', gatewayOverCore(core, naming)],
      ['with the in-flight limits and request timeout', gatewayOverCore(core, naming, { limits })],
      ['with metrics', gatewayOverCore(core, naming, { metrics: new ServerMetrics() })],
      ['with limits and metrics (the server default)', gatewayOverCore(core, naming, { limits, metrics: new ServerMetrics() })],
      [
        'with metrics and audit (Metadata, to a file)',
        gatewayOverCore(core, naming, {
          metrics: new ServerMetrics(),
          audit: { policy, sink: (e: AuditEvent) => auditLog.process([e]), naming, clock: systemClock },
        }),
      ],
      [
        'with metrics, audit and the -v=3 request line',
        gatewayOverCore(core, naming, {
          metrics: new ServerMetrics(),
          audit: { policy, sink: (e: AuditEvent) => auditLog.process([e]), naming, clock: systemClock },
          onRequestLogged: (entry) => void (lines += JSON.stringify(entry).length > 0 ? 1 : 0),
        }),
      ],
    ];
    const request: GatewayRequest = {
      method: 'GET',
      path: '/api/v1/namespaces/default/configmaps/bench',
      query: new URLSearchParams(),
      headers: { accept: 'application/json', 'user-agent': 'bench' },
      peerCertificate: { verified: true, commonName: 'admin', organizations: ['system:masters'] },
      remoteAddress: '127.0.0.1',
      signal: new AbortController().signal,
      readBody: async () => Buffer.alloc(0),
    };
    for (const [name, gateway] of variants) {
      const check = nullResponse();
      await gateway.handle(request, check);
      if (check.statusCode !== 200) throw new Error(`${name}: the GET answered ${check.statusCode}`);
    }
    const ms = ctx.options.quick ? 400 : 2000;
    // Twice round, interleaved, keeping each variant's better run: the machine is shared.
    const best = new Map<string, number>();
    for (let round = 0; round < 2; round++) {
      for (const [name, gateway] of variants) {
        const us = await cpuPerCall(async () => gateway.handle(request, nullResponse()), ms);
        best.set(name, Math.min(best.get(name) ?? Infinity, us));
      }
    }
    const reference = best.get('plain pipeline')!;
    for (const [name] of variants) {
      const us = best.get(name)!;
      const extra = us - reference;
      ctx.rows.push({
        scenario: 10,
        name: `operations: cached GET, ${name}`,
        keelson: `${micros(us)} µs CPU per request`,
        reference: name === 'plain pipeline' ? '(reference)' : `${micros(reference)} µs plain`,
        ratio: name === 'plain pipeline' ? '1.00×' : `${(us / reference).toFixed(2)}×`,
        cpu: micros(us),
        latency: '',
        note:
          name === 'plain pipeline'
            ? 'in process, socket-free gateway over the embedded store; the request is served from the watch cache'
            : `+${micros(extra)} µs, ${((extra / reference) * 100).toFixed(0)}% of a cached GET`,
      });
    }
    if (lines === 0) throw new Error('the request log variant logged nothing');
  } finally {
    await auditLog.close();
    await core.close();
  }
}
