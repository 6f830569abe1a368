/**
 * Webhook token authentication (`--authentication-token-webhook-config-file`), as upstream's:
 * the file is in kubeconfig format — the current context's cluster names the service (`server`,
 * `certificate-authority[-data]`), its user the client certificate (`client-certificate[-data]`,
 * `client-key[-data]`). Each unknown token is POSTed as a TokenReview (`authentication.<vendor>`
 * `v1beta1` by default, or `v1`); the answer's `status.authenticated` and `status.user` decide,
 * and the decision is cached for `--authentication-token-webhook-cache-ttl` (default 2 minutes)
 * keyed by a hash of the token, never the token itself. A webhook that fails is no decision.
 */
import https from 'node:https';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { UserInfo } from '../core';
import type { Clock } from '../clock';
import { type AuthenticationResult, type TokenAuthenticator, rejected } from './types';

export interface WebhookClientConfig {
  server: string;
  ca?: string;
  cert?: string;
  key?: string;
}

export interface WebhookOptions {
  client: WebhookClientConfig;
  /** `authentication.<vendor>/v1beta1` or `/v1`. */
  apiVersion: string;
  cacheTtlMs: number;
  clock: Clock;
}

interface KubeconfigFile {
  clusters?: Array<{ name?: string; cluster?: Record<string, string> }>;
  users?: Array<{ name?: string; user?: Record<string, string> }>;
  contexts?: Array<{ name?: string; context?: { cluster?: string; user?: string } }>;
  'current-context'?: string;
}

/** The webhook's client settings from a kubeconfig-format file; paths are relative to it. */
export function readWebhookConfig(file: string): WebhookClientConfig {
  const doc = YAML.parse(readFileSync(file, 'utf8')) as KubeconfigFile;
  const contexts = doc.contexts ?? [];
  const context = contexts.find((c) => c.name === doc['current-context'])?.context ?? contexts[0]?.context ?? {};
  const cluster = (doc.clusters ?? []).find((c) => c.name === context.cluster)?.cluster ?? doc.clusters?.[0]?.cluster;
  const user = (doc.users ?? []).find((u) => u.name === context.user)?.user ?? doc.users?.[0]?.user ?? {};
  if (!cluster?.server) throw new Error(`${file}: no cluster with a server`);
  const dir = path.dirname(file);
  const pem = (data: string | undefined, ref: string | undefined): string | undefined =>
    data ? Buffer.from(data, 'base64').toString('utf8') : ref ? readFileSync(path.resolve(dir, ref), 'utf8') : undefined;
  const config: WebhookClientConfig = { server: cluster.server };
  const ca = pem(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = pem(user['client-certificate-data'], user['client-certificate']);
  const key = pem(user['client-key-data'], user['client-key']);
  if (ca) config.ca = ca;
  if (cert) config.cert = cert;
  if (key) config.key = key;
  return config;
}

/** POST a JSON review to the webhook and read its JSON answer (shared with the Webhook authorizer). */
export function postReview(client: WebhookClientConfig, body: string, timeoutMs = 10_000): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      client.server,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        ca: client.ca,
        cert: client.cert,
        key: client.key,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
          } catch (err) {
            reject(new Error(`the answer is not JSON: ${(err as Error).message}`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

function userOf(raw: unknown): UserInfo | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as { username?: unknown; uid?: unknown; groups?: unknown; extra?: unknown };
  if (typeof u.username !== 'string' || u.username === '') return undefined;
  const user: UserInfo = { username: u.username, groups: Array.isArray(u.groups) ? u.groups.filter((g): g is string => typeof g === 'string') : [] };
  if (typeof u.uid === 'string' && u.uid) user.uid = u.uid;
  if (typeof u.extra === 'object' && u.extra !== null) {
    const extra: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(u.extra)) if (Array.isArray(v)) extra[k] = v.filter((x): x is string => typeof x === 'string');
    if (Object.keys(extra).length) user.extra = extra;
  }
  return user;
}

export function webhookTokenAuthenticator(options: WebhookOptions): TokenAuthenticator {
  const cache = new Map<string, { result: AuthenticationResult; expires: number }>();
  return {
    name: 'webhook',
    async authenticateToken(token: string): Promise<AuthenticationResult> {
      const key = createHash('sha256').update(token).digest('hex');
      const now = options.clock.now();
      const hit = cache.get(key);
      if (hit && hit.expires > now) return hit.result;
      let answer;
      try {
        answer = await postReview(options.client, JSON.stringify({ apiVersion: options.apiVersion, kind: 'TokenReview', spec: { token } }));
      } catch (err) {
        return rejected(`webhook: ${(err as Error).message}`);
      }
      if (answer.status !== 200 && answer.status !== 201) return rejected(`webhook: HTTP ${answer.status}`);
      const status = (answer.json as { status?: { authenticated?: unknown; user?: unknown; error?: unknown } }).status ?? {};
      let result: AuthenticationResult;
      if (status.authenticated === true) {
        const user = userOf(status.user);
        result = user ? { outcome: 'authenticated', user } : rejected('webhook: authenticated without a username');
      } else {
        result = rejected(`webhook: ${typeof status.error === 'string' && status.error ? status.error : 'token not authenticated'}`);
      }
      cache.set(key, { result, expires: now + options.cacheTtlMs });
      if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
      return result;
    },
  };
}
