/**
 * The `extension-apiserver-authentication` ConfigMap in the system namespace, kept as upstream's
 * ClusterAuthenticationTrust controller keeps it: what an extension API server reads to trust
 * this server's clients and its front proxy — `client-ca-file`, and, once a front-proxy CA is
 * known, `requestheader-client-ca-file`, `requestheader-allowed-names` and the header lists
 * (`requestheader-username-headers`, `-uid-headers`, `-group-headers`, `-extra-headers-prefix`)
 * as JSON string arrays. Several servers on one store each merge their own into what is there:
 * the CA bundles' certificates once each (expired ones dropped, five minutes' slack), the lists
 * each name once, in the order first written. Upstream runs it in every API server (a post-start
 * hook, not a leader-elected controller), on every change of the ConfigMap and once a minute.
 */
import type { X509Certificate } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { type ApiObject, type InformerChange, type InformerView, type RequestContext, followResource } from '../core';
import { parseCaBundle } from '../authn';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export const AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication';

/** Upstream's resync: the ConfigMap is checked once a minute whatever happens. */
export const AUTHENTICATION_TRUST_RESYNC_MS = 60_000;

/** Upstream's slack when dropping expired CAs from the merged bundles. */
const EXPIRY_SLACK_MS = 5 * 60_000;

/** What this server publishes. */
export interface ClusterAuthenticationInfo {
  /** PEM: the CAs that verify this server's clients' certificates. */
  clientCa?: string;
  /** The front proxy's settings (`--requestheader-*`), when configured. */
  requestHeader?: {
    clientCa: string;
    allowedNames: readonly string[];
    usernameHeaders: readonly string[];
    uidHeaders: readonly string[];
    groupHeaders: readonly string[];
    extraHeaderPrefixes: readonly string[];
  };
}

export interface ClusterAuthenticationTrustOptions extends ApiControllerOptions {
  info: ClusterAuthenticationInfo;
}

/** The ConfigMap's content as upstream reads it, before it is merged and written back. */
interface TrustData {
  clientCa: X509Certificate[];
  requestHeaderCa: X509Certificate[];
  usernameHeaders: string[];
  uidHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  allowedNames: string[];
}

const LIST_KEYS = {
  usernameHeaders: 'requestheader-username-headers',
  uidHeaders: 'requestheader-uid-headers',
  groupHeaders: 'requestheader-group-headers',
  extraHeaderPrefixes: 'requestheader-extra-headers-prefix',
  allowedNames: 'requestheader-allowed-names',
} as const;
type ListField = keyof typeof LIST_KEYS;
const LIST_FIELDS = Object.keys(LIST_KEYS) as ListField[];

const CLIENT_CA_KEY = 'client-ca-file';
const REQUEST_HEADER_CA_KEY = 'requestheader-client-ca-file';

export class ClusterAuthenticationTrustController {
  private readonly configMaps: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly namespace: string;
  private readonly required: TrustData;
  private cancelResync: (() => void) | undefined;

  constructor(private readonly options: ClusterAuthenticationTrustOptions) {
    this.namespace = options.naming.namespaces.system;
    this.ctx = { user: options.user, userAgent: 'keelson-apiserver/cluster-authentication-trust' };
    this.required = requiredData(options.info);
    // One key: the one ConfigMap.
    this.queue = new WorkQueue<string>(
      (key) => key,
      () => this.sync(),
      { name: 'cluster_authentication_trust_controller', metrics: options.queueMetrics, clock: options.clock },
    );
    const key = `${this.namespace}/${AUTHENTICATION_CONFIGMAP}`;
    this.configMaps = followResource(
      options,
      { group: '', version: 'v1', resource: 'configmaps', namespace: this.namespace },
      this.ctx,
      (c?: InformerChange) => {
        if (!c || c.object.metadata?.name === AUTHENTICATION_CONFIGMAP) this.queue.add(key);
      },
    );
  }

  start(): void {
    const key = `${this.namespace}/${AUTHENTICATION_CONFIGMAP}`;
    this.queue.startWhen(this.configMaps.synced, (err) =>
      this.options.log?.(`cluster_authentication_trust_controller: informer failed to start: ${err.message}`),
    );
    this.queue.add(key);
    this.cancelResync = this.options.clock.setInterval(() => this.queue.add(key), AUTHENTICATION_TRUST_RESYNC_MS);
  }

  /** Resolves when nothing is queued or running (tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.cancelResync?.();
    this.queue.stop();
    this.configMaps.stop();
  }

  private async sync(): Promise<void> {
    const current: ApiObject | undefined = this.configMaps.objects.get(`${this.namespace}/${AUTHENTICATION_CONFIGMAP}`);
    const currentData = (current?.data as Record<string, string> | undefined) ?? {};
    const data = renderData(combine(parseData(currentData), this.required), this.options.clock.now());
    // Upstream compares semantically: no ConfigMap and nothing to write are the same.
    if (isDeepStrictEqual(currentData, data)) return;
    await this.ensureNamespace();
    const target = { group: '', version: 'v1', resource: 'configmaps', namespace: this.namespace };
    try {
      if (current) {
        await this.options.core.update({ ...target, name: AUTHENTICATION_CONFIGMAP }, { ...current, data }, {}, this.ctx);
      } else {
        const created = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: AUTHENTICATION_CONFIGMAP, namespace: this.namespace }, data };
        await this.options.core.create(target, created, {}, this.ctx);
      }
    } catch (err) {
      // Grown too big: clear it and count on every server to add its part again (upstream's way out).
      if (StatusError.is(err, 'RequestEntityTooLarge') || (StatusError.is(err, 'Invalid') && (err as Error).message.includes('Too long'))) {
        await this.options.core.delete({ ...target, name: AUTHENTICATION_CONFIGMAP }, {}, this.ctx);
      }
      // A conflict or a ConfigMap created meanwhile: the informer brings the new one and the retry merges into it.
      throw err;
    }
  }

  private async ensureNamespace(): Promise<void> {
    const target = { group: '', version: 'v1', resource: 'namespaces' };
    try {
      await this.options.core.get({ ...target, name: this.namespace }, { resourceVersion: '0' }, this.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
      try {
        await this.options.core.create(target, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace } }, {}, this.ctx);
      } catch (createErr) {
        if (!StatusError.is(createErr, 'AlreadyExists')) throw createErr;
      }
    }
  }
}

function requiredData(info: ClusterAuthenticationInfo): TrustData {
  const rh = info.requestHeader;
  return {
    clientCa: info.clientCa ? certificatesOf(info.clientCa) : [],
    requestHeaderCa: rh ? certificatesOf(rh.clientCa) : [],
    usernameHeaders: [...(rh?.usernameHeaders ?? [])],
    uidHeaders: [...(rh?.uidHeaders ?? [])],
    groupHeaders: [...(rh?.groupHeaders ?? [])],
    extraHeaderPrefixes: [...(rh?.extraHeaderPrefixes ?? [])],
    allowedNames: [...(rh?.allowedNames ?? [])],
  };
}

/** The certificates of a PEM bundle; a block that does not parse fails the sync (retried), as upstream's ParseCertsPEM. */
const certificatesOf = parseCaBundle;

/** What another server (or this one, earlier) wrote; a list that is not a JSON array of strings fails the sync, as upstream's. */
function parseData(data: Record<string, string>): TrustData {
  const list = (key: string): string[] => {
    const text = data[key];
    if (!text) return [];
    const value: unknown = JSON.parse(text);
    if (value === null) return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw new Error(`${key}: not a JSON array of strings`);
    return value as string[];
  };
  const parsed = {
    clientCa: data[CLIENT_CA_KEY] ? certificatesOf(data[CLIENT_CA_KEY]) : [],
    requestHeaderCa: data[REQUEST_HEADER_CA_KEY] ? certificatesOf(data[REQUEST_HEADER_CA_KEY]) : [],
  } as TrustData;
  for (const field of LIST_FIELDS) parsed[field] = list(LIST_KEYS[field]);
  return parsed;
}

/** Upstream's merge: each list's names once, the existing ones first; each bundle's certificates once. */
function combine(existing: TrustData, required: TrustData): TrustData {
  const combined = {
    clientCa: [...existing.clientCa, ...required.clientCa],
    requestHeaderCa: [...existing.requestHeaderCa, ...required.requestHeaderCa],
  } as TrustData;
  for (const field of LIST_FIELDS) combined[field] = [...new Set([...existing[field], ...required[field]])];
  return combined;
}

function renderData(info: TrustData, now: number): Record<string, string> {
  const data: Record<string, string> = {};
  const clientCa = encodeBundle(info.clientCa, now);
  if (clientCa) data[CLIENT_CA_KEY] = clientCa;
  const requestHeaderCa = encodeBundle(info.requestHeaderCa, now);
  if (!requestHeaderCa) return data;
  for (const field of LIST_FIELDS) data[LIST_KEYS[field]] = JSON.stringify(info[field]);
  data[REQUEST_HEADER_CA_KEY] = requestHeaderCa;
  return data;
}

/** The certificates not expired (five minutes' slack), each once, as PEM blocks of 64-character lines (Go's pem.Encode). */
function encodeBundle(certificates: readonly X509Certificate[], now: number): string {
  const seen = new Set<string>();
  let pem = '';
  for (const cert of certificates) {
    if (Date.parse(cert.validTo) <= now - EXPIRY_SLACK_MS) continue;
    const base64 = cert.raw.toString('base64');
    if (seen.has(base64)) continue;
    seen.add(base64);
    pem += `-----BEGIN CERTIFICATE-----\n${base64.replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
  }
  return pem;
}
