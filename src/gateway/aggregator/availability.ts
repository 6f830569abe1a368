/**
 * The availability controller (upstream 1.32's AvailableConditionController, with Endpoints):
 * each remote APIService's `Available` condition from its Service, the Service's endpoints
 * (a ClusterIP Service only; an ExternalName one names its host itself) and a GET of its
 * discovery document `/apis/<group>/<version>` on the extension server (TLS not verified, as
 * upstream's probe; presenting the proxy client certificate as `system:kube-aggregator` in
 * `system:masters`; five attempts at once, one success enough). Checked when an APIService
 * changes and every 30 s of the injected clock; * status written only when the condition changed.
 */
import * as https from 'node:https';
import type { Clock } from '../../clock';
import {
  AVAILABLE,
  type APIService,
  type APIServiceCondition,
  type CoreApi,
  type RequestContext,
  apiServiceCondition,
  isLocalAPIService,
  withAPIServiceCondition,
} from '../../core';
import type { Naming } from '../../naming';
import { rfc3339 } from '../../clock';
import { StatusError } from '../../status';
import type { APIServiceRegistrations } from './registrations';
import { authProxyHeaders, type ProxyClientCertificate, type ServiceResolver, serviceRef } from './transport';

export const AVAILABILITY_RESYNC_MS = 30_000;
/** Upstream's discovery probe client timeout. */
export const PROBE_TIMEOUT_MS = 5_000;
const PROBE_USER = { username: 'system:kube-aggregator', groups: ['system:masters'] };

interface ServiceObject {
  spec?: { type?: string; ports?: { name?: string; port?: number }[] };
}
interface EndpointsObject {
  subsets?: { addresses?: unknown[]; ports?: { name?: string; port?: number }[] }[];
}

type Verdict = Pick<APIServiceCondition, 'status' | 'reason' | 'message'>;

export interface AvailabilityOptions {
  api: CoreApi;
  naming: Naming;
  clock: Clock;
  ctx: RequestContext;
  registrations: APIServiceRegistrations;
  resolver: ServiceResolver;
  proxyClient?: () => ProxyClientCertificate | undefined;
  /** Told after each check: the APIService as written, and whether it is Available. */
  onChecked?: (apiService: APIService, available: boolean) => void;
  log?: (message: string) => void;
}

function isNotFound(err: unknown): boolean {
  return err instanceof StatusError && err.status.code === 404;
}

/** upstream's insurance against a slow dial: an attempt that has not ended by then fails. */
export const PROBE_INSURANCE_MS = 6_000;
/** upstream's attempts at once; the first success wins. */
export const PROBE_ATTEMPTS = 5;

/** One GET of the discovery document: resolves on 2xx, rejects with upstream's words otherwise (a redirect is not followed). */
function probe(url: string, options: https.RequestOptions, clock: Clock): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ...options, method: 'GET', agent: false }, (res) => {
      cancel();
      res.resume();
      const code = res.statusCode ?? 0;
      if (code < 200 || code >= 300) reject(new Error(`bad status from ${url}: ${code}`));
      else resolve();
    });
    const cancel = clock.setTimeout(
      () => req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
      PROBE_TIMEOUT_MS,
    );
    req.on('error', (err) => {
      cancel();
      reject(err.message.startsWith('Get "') ? err : new Error(`Get "${url}": ${err.message}`));
    });
    req.end();
  });
}

/** `promise`, or a rejection with `message` once `ms` of the clock passed. */
function within<T>(promise: Promise<T>, ms: number, clock: Clock, message: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimeout(() => reject(new Error(message)), ms);
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (err: unknown) => {
        cancel();
        reject(err);
      },
    );
  });
}

export class AvailabilityController {
  private readonly stopResync: () => void;
  private readonly stopListening: () => void;
  private running = new Map<string, Promise<void>>();
  private again = new Set<string>();
  private stopped = false;

  constructor(private readonly options: AvailabilityOptions) {
    this.stopListening = options.registrations.onChange(() => this.checkAll());
    this.stopResync = options.clock.setInterval(() => this.checkAll(), AVAILABILITY_RESYNC_MS);
  }

  stop(): void {
    this.stopped = true;
    this.stopResync();
    this.stopListening();
  }

  /** Resolves when every check under way has ended (tests). */
  async settled(): Promise<void> {
    while (this.running.size) await Promise.all(this.running.values());
  }

  checkAll(): void {
    for (const apiService of this.options.registrations.all()) if (!isLocalAPIService(apiService)) this.check(apiService.metadata?.name ?? '');
  }

  /** Check one APIService by name; a check asked for while one runs runs once more after it. */
  check(name: string): void {
    if (this.stopped) return;
    if (this.running.has(name)) {
      this.again.add(name);
      return;
    }
    const run = this.sync(name)
      .catch((err: unknown) => this.options.log?.(`APIService ${name}: ${(err as Error).message}`))
      .finally(() => {
        this.running.delete(name);
        if (this.again.delete(name)) this.check(name);
      });
    this.running.set(name, run);
  }

  private find(name: string): APIService | undefined {
    for (const apiService of this.options.registrations.all()) if (apiService.metadata?.name === name) return apiService;
    return undefined;
  }

  private async sync(name: string): Promise<void> {
    const apiService = this.find(name);
    if (!apiService || isLocalAPIService(apiService)) return;
    const verdict = await this.verdict(apiService);
    const available = verdict.status === 'True';
    const old = apiServiceCondition(apiService, AVAILABLE);
    if (old && old.status === verdict.status && old.reason === verdict.reason && old.message === verdict.message) {
      this.options.onChecked?.(apiService, available);
      return;
    }
    const condition: APIServiceCondition = { type: AVAILABLE, ...verdict, lastTransitionTime: rfc3339(this.options.clock.now()) };
    const updated: APIService = {
      ...apiService,
      status: { ...apiService.status, conditions: withAPIServiceCondition(apiService.status?.conditions, condition) },
    };
    const { api, naming, ctx } = this.options;
    try {
      const written = await api.update(
        { group: naming.groups.apiregistration, version: 'v1', resource: 'apiservices', name, subresource: 'status' },
        updated,
        {},
        ctx,
      );
      this.options.onChecked?.(written.object as APIService, available);
    } catch (err) {
      // A conflict or a deletion: the informer brings the new object, and with it another check.
      if (!(err instanceof StatusError)) throw err;
    }
  }

  /** upstream's checks, in its order; the first that fails decides. */
  private async verdict(apiService: APIService): Promise<Verdict> {
    const { api, ctx } = this.options;
    const ref = serviceRef(apiService);
    const where = `service/${ref.name} in ${JSON.stringify(ref.namespace)}`;
    let service: ServiceObject;
    try {
      service = (await api.get({ group: '', version: 'v1', resource: 'services', namespace: ref.namespace, name: ref.name }, {}, ctx)) as ServiceObject;
    } catch (err) {
      if (isNotFound(err)) return { status: 'False', reason: 'ServiceNotFound', message: `${where} is not present` };
      return { status: 'Unknown', reason: 'ServiceAccessError', message: `${where} cannot be checked due to: ${(err as Error).message}` };
    }
    if ((service.spec?.type ?? 'ClusterIP') === 'ClusterIP') {
      const port = service.spec?.ports?.find((p) => p.port === ref.port);
      if (!port) return { status: 'False', reason: 'ServicePortError', message: `${where} is not listening on port ${ref.port}` };
      const portName = port.name ?? '';
      let endpoints: EndpointsObject;
      try {
        endpoints = (await api.get({ group: '', version: 'v1', resource: 'endpoints', namespace: ref.namespace, name: ref.name }, {}, ctx)) as EndpointsObject;
      } catch (err) {
        if (isNotFound(err)) return { status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for ${where}` };
        return { status: 'Unknown', reason: 'EndpointsAccessError', message: `${where} cannot be checked due to: ${(err as Error).message}` };
      }
      const ready = (endpoints.subsets ?? []).some((s) => (s.addresses?.length ?? 0) > 0 && (s.ports ?? []).some((p) => (p.name ?? '') === portName));
      if (!ready)
        return { status: 'False', reason: 'MissingEndpoints', message: `endpoints for ${where} have no addresses with port name ${JSON.stringify(portName)}` };
    }
    // upstream's attempts: each resolves the Service and GETs the discovery document; one success is enough.
    const client = this.options.proxyClient?.();
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of authProxyHeaders(PROBE_USER)) headers[name] = headers[name] ? ([] as string[]).concat(headers[name]!, value) : value;
    const path = apiService.metadata?.name === 'v1.' ? `/api/${apiService.spec?.version}` : `/apis/${apiService.spec?.group}/${apiService.spec?.version}`;
    const attempt = async (): Promise<void> => {
      const resolved = await this.options.resolver.resolve(ref);
      const url = `https://${resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host}:${resolved.port}${path}`;
      const tls = { rejectUnauthorized: false, servername: resolved.serverName, headers, ...(client ? { cert: client.cert, key: client.key } : {}) };
      await within(probe(url, tls, this.options.clock), PROBE_INSURANCE_MS, this.options.clock, `timed out waiting for ${url}`).catch((err: Error) => {
        throw err.message.startsWith('timed out waiting') ? err : new Error(`failing or missing response from ${url}: ${err.message}`);
      });
    };
    const outcomes = await Promise.allSettled(Array.from({ length: PROBE_ATTEMPTS }, attempt));
    if (!outcomes.some((o) => o.status === 'fulfilled')) {
      const last = outcomes[outcomes.length - 1] as PromiseRejectedResult;
      return { status: 'False', reason: 'FailedDiscoveryCheck', message: (last.reason as Error).message };
    }
    return { status: 'True', reason: 'Passed', message: 'all checks passed' };
  }
}
