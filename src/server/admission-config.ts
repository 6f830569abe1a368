/**
 * `--admission-control-config-file`: upstream's AdmissionConfiguration, one entry per plugin,
 * each with its configuration inline or in a file of its own. Keelson reads the webhook
 * plugins' WebhookAdmissionConfiguration: a kubeconfig whose `users` are named after the
 * webhook hosts they authenticate to (`host:port`, `host`, `*.domain`, or `*`), giving the
 * client certificate or bearer token presented to each webhook.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import type { Naming } from '../naming';
import type { WebhookCredentialResolver, WebhookCredentials } from '../core';

interface PluginEntry {
  name?: string;
  path?: string;
  configuration?: Record<string, unknown>;
}

const WEBHOOK_PLUGINS = new Set(['ValidatingAdmissionWebhook', 'MutatingAdmissionWebhook']);

function readDoc(file: string): Record<string, unknown> {
  const doc = YAML.parse(readFileSync(file, 'utf8')) as unknown;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${file}: not an object`);
  return doc as Record<string, unknown>;
}

function credentialsFromKubeconfig(file: string): Map<string, WebhookCredentials> {
  const doc = readDoc(file);
  const dir = path.dirname(file);
  const out = new Map<string, WebhookCredentials>();
  const pem = (data: unknown, ref: unknown): string | undefined =>
    typeof data === 'string' && data
      ? Buffer.from(data, 'base64').toString('utf8')
      : typeof ref === 'string' && ref
        ? readFileSync(path.resolve(dir, ref), 'utf8')
        : undefined;
  for (const entry of (doc.users as Array<{ name?: string; user?: Record<string, unknown> }> | undefined) ?? []) {
    if (!entry.name || !entry.user) continue;
    const u = entry.user;
    const creds: WebhookCredentials = {};
    const cert = pem(u['client-certificate-data'], u['client-certificate']);
    const key = pem(u['client-key-data'], u['client-key']);
    if (cert && key) Object.assign(creds, { cert, key });
    if (typeof u.token === 'string' && u.token) creds.token = u.token;
    else if (typeof u.tokenFile === 'string' && u.tokenFile) creds.token = readFileSync(path.resolve(dir, u.tokenFile), 'utf8').trim();
    out.set(entry.name, creds);
  }
  return out;
}

/** Upstream's lookup: the exact `host:port`, the host, then wildcards of the left-most label, then `*`. */
function resolver(users: Map<string, WebhookCredentials>): WebhookCredentialResolver {
  return (hostPort, host) => {
    const wildcard = (name: string) => (name.includes('.') ? `*${name.slice(name.indexOf('.'))}` : undefined);
    for (const name of [hostPort, host, wildcard(hostPort), wildcard(host), '*']) {
      if (name && users.has(name)) return users.get(name);
    }
    return undefined;
  };
}

export interface AdmissionControlConfig {
  /** Credentials for webhook hosts, from the webhook plugins' kubeconfig (the first plugin that names one). */
  webhookCredentials?: WebhookCredentialResolver;
}

export function readAdmissionControlConfig(file: string, naming: Naming): AdmissionControlConfig {
  const doc = readDoc(file);
  const groups = [naming.groups.apiserverConfig, naming.group('apiserver')];
  const apiVersion = String(doc.apiVersion ?? '');
  if (doc.kind !== 'AdmissionConfiguration' || !groups.some((g) => apiVersion.startsWith(`${g}/`))) {
    throw new Error(`${file}: expected kind AdmissionConfiguration in ${naming.groups.apiserverConfig}/v1, got ${apiVersion}, Kind=${String(doc.kind ?? '')}`);
  }
  const dir = path.dirname(file);
  const users = new Map<string, WebhookCredentials>();
  for (const entry of (doc.plugins as PluginEntry[] | undefined) ?? []) {
    if (!entry.name || !WEBHOOK_PLUGINS.has(entry.name)) continue;
    const config = entry.configuration ?? (entry.path ? readDoc(path.resolve(dir, entry.path)) : undefined);
    const kubeConfigFile = config?.kubeConfigFile;
    if (typeof kubeConfigFile !== 'string' || !kubeConfigFile) continue;
    for (const [name, creds] of credentialsFromKubeconfig(path.resolve(dir, kubeConfigFile))) if (!users.has(name)) users.set(name, creds);
  }
  return users.size > 0 ? { webhookCredentials: resolver(users) } : {};
}
