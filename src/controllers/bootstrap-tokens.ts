/**
 * The two controllers of bootstrap tokens, as upstream's (both off by default; enable them with
 * `--controllers=*,tokencleaner,bootstrapsigner`):
 *
 * - the token cleaner deletes a bootstrap token Secret in the system namespace once its
 *   `expiration` has passed (with a uid precondition, so a recreated Secret survives), looking
 *   again at the moment a Secret expires on the injected clock;
 * - the bootstrap signer keeps the ConfigMap `cluster-info` in the public namespace signed: one
 *   key `jws-kubeconfig-<token-id>` per token that may sign (`usage-bootstrap-signing: true`,
 *   not expired), holding a detached JWS (HS256, header `kid` the token id) of the ConfigMap's
 *   `kubeconfig`; signatures are redone when the kubeconfig changes and dropped when their token
 *   goes. The HMAC key is the full token `<id>.<secret>`, as docs/API.md states the contract
 *   (upstream's signer keys with the secret part alone).
 */
import { isDeepStrictEqual } from 'node:util';
import { jose } from '../util/jose';
import { type ApiObject, type RequestContext, type ResourceTarget, followResource, type InformerChange, type InformerView } from '../core';
import { secretData } from '../authn';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export const CLUSTER_INFO = 'cluster-info';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';
const TOKEN_SECRET_PREFIX = 'bootstrap-token-';
const TOKEN_ID = /^[a-z0-9]{6}$/;
const TOKEN_SECRET = /^[a-z0-9]{16}$/;

export type BootstrapTokenControllerOptions = ApiControllerOptions;

/** A bootstrap token Secret's id, secret and expiry, when it is well formed; undefined otherwise. */
export function bootstrapToken(secret: ApiObject, secretType: string): { id: string; secret: string; expiresAt?: number; signing: boolean } | undefined {
  if (secret.type !== secretType || !secret.metadata?.name?.startsWith(TOKEN_SECRET_PREFIX)) return undefined;
  const id = secretData(secret, 'token-id');
  const tokenSecret = secretData(secret, 'token-secret');
  if (!id || !tokenSecret || !TOKEN_ID.test(id) || !TOKEN_SECRET.test(tokenSecret) || secret.metadata.name !== `${TOKEN_SECRET_PREFIX}${id}`) return undefined;
  const expiration = secretData(secret, 'expiration');
  const expiresAt = expiration === undefined ? undefined : Date.parse(expiration);
  return { id, secret: tokenSecret, expiresAt: Number.isNaN(expiresAt) ? 0 : expiresAt, signing: secretData(secret, 'usage-bootstrap-signing') === 'true' };
}

/** The detached JWS (RFC 7515 appendix F) of `content`, HS256 with `key`: `<header>..<signature>`. */
export async function detachedSignature(content: string, id: string, key: string): Promise<string> {
  const jws = await new (jose().CompactSign)(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'HS256', kid: id })
    .sign(new TextEncoder().encode(key));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

function secretsInformer(options: BootstrapTokenControllerOptions, ctx: RequestContext, onChange: (c?: InformerChange) => void): InformerView {
  return followResource(options, { group: '', version: 'v1', resource: 'secrets', namespace: options.naming.namespaces.system }, ctx, onChange);
}

export class TokenCleaner {
  private readonly secrets: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly timers = new Map<string, () => void>();

  constructor(private readonly options: BootstrapTokenControllerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/token-cleaner' };
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.sync(k),
      { name: 'token_cleaner', metrics: options.queueMetrics },
    );
    this.secrets = secretsInformer(options, this.ctx, (c) => {
      if (!c) for (const s of this.secrets.objects.values()) this.queue.add(s.metadata!.name!);
      else if (c.type !== 'DELETED') this.queue.add(c.object.metadata!.name!);
    });
  }

  start(): void {
    this.queue.startWhen(this.secrets.synced, (err) => this.options.log?.(`token-cleaner: informer failed to start: ${err.message}`));
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    for (const cancel of this.timers.values()) cancel();
    this.queue.stop();
    this.secrets.stop();
  }

  private async sync(name: string): Promise<void> {
    this.timers.get(name)?.();
    this.timers.delete(name);
    const secret = this.secrets.objects.get(`${this.options.naming.namespaces.system}/${name}`);
    if (!secret || secret.metadata?.deletionTimestamp) return;
    const token = bootstrapToken(secret, this.options.naming.bootstrapTokenSecretType);
    if (token?.expiresAt === undefined) return;
    const left = token.expiresAt - this.options.clock.now();
    if (left > 0) {
      this.timers.set(
        name,
        this.options.clock.setTimeout(() => this.queue.add(name), left),
      );
      return;
    }
    try {
      await this.options.core.delete(
        { group: '', version: 'v1', resource: 'secrets', namespace: this.options.naming.namespaces.system, name },
        { preconditions: { uid: secret.metadata?.uid } },
        this.ctx,
      );
      this.options.log?.(`token-cleaner: deleted expired bootstrap token ${name}`);
    } catch (err) {
      if (StatusError.is(err, 'NotFound') || StatusError.is(err, 'Conflict')) return;
      throw err;
    }
  }
}

export class BootstrapSigner {
  private readonly secrets: InformerView;
  private readonly configMaps: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly timers: Array<() => void> = [];

  constructor(private readonly options: BootstrapTokenControllerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/bootstrap-signer' };
    // One item: the cluster-info ConfigMap, signed again on any change of it or of a token.
    this.queue = new WorkQueue<string>(
      (k) => k,
      () => this.sync(),
      { name: 'bootstrap_signer_queue', metrics: options.queueMetrics },
    );
    const poke = () => this.queue.add(CLUSTER_INFO);
    this.secrets = secretsInformer(options, this.ctx, poke);
    this.configMaps = followResource(
      options,
      { group: '', version: 'v1', resource: 'configmaps', namespace: options.naming.namespaces.public },
      this.ctx,
      (c) => (!c || c.object.metadata?.name === CLUSTER_INFO) && poke(),
    );
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.secrets.synced, this.configMaps.synced]), (err) =>
      this.options.log?.(`bootstrap-signer: informers failed to start: ${err.message}`),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    for (const cancel of this.timers) cancel();
    this.queue.stop();
    this.secrets.stop();
    this.configMaps.stop();
  }

  private async sync(): Promise<void> {
    const { naming, clock } = this.options;
    for (const cancel of this.timers.splice(0)) cancel();
    const cm = this.configMaps.objects.get(`${naming.namespaces.public}/${CLUSTER_INFO}`);
    if (!cm || cm.metadata?.deletionTimestamp) return;
    const data = { ...((cm.data ?? {}) as Record<string, string>) };
    const kubeconfig = data.kubeconfig;
    for (const key of Object.keys(data)) if (key.startsWith(JWS_KEY_PREFIX)) delete data[key];
    if (kubeconfig !== undefined) {
      const now = clock.now();
      for (const secret of this.secrets.objects.values()) {
        if (secret.metadata?.deletionTimestamp) continue;
        const token = bootstrapToken(secret, naming.bootstrapTokenSecretType);
        if (!token?.signing) continue;
        if (token.expiresAt !== undefined) {
          if (token.expiresAt <= now) continue;
          // Look again when it expires: its signature must go then.
          this.timers.push(clock.setTimeout(() => this.queue.add(CLUSTER_INFO), token.expiresAt - now));
        }
        data[`${JWS_KEY_PREFIX}${token.id}`] = await detachedSignature(kubeconfig, token.id, `${token.id}.${token.secret}`);
      }
    }
    if (isDeepStrictEqual(data, cm.data ?? {})) return;
    const target: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: naming.namespaces.public, name: CLUSTER_INFO };
    try {
      await this.options.core.update(target, { ...cm, data }, {}, this.ctx);
    } catch (err) {
      // Changed or deleted meanwhile: the informer brings the new state and another sync.
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return;
      throw err;
    }
  }
}
