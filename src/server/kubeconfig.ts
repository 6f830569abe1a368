/**
 * `<data-dir>/admin.kubeconfig`: a cluster-admin credential for kubectl and client libraries,
 * pointing at the port actually served. It is rewritten only when its content would change
 * (a new port, new certificates), so an unchanged restart leaves the file alone.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isIP } from 'node:net';
import YAML from 'yaml';

export const CLUSTER_NAME = 'keelson';
export const ADMIN_CONTEXT = 'admin@keelson';

export interface KubeconfigOptions {
  server: string;
  /** PEM CA certificate(s) that verify the serving certificate. */
  certificateAuthority: string;
  clientCertificate: string;
  clientKey: string;
  userName?: string;
  contextName?: string;
}

const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');

/** The URL clients should use: loopback for a wildcard bind address, brackets for IPv6. */
export function serverUrl(bindAddress: string, port: number): string {
  const host = bindAddress === '0.0.0.0' || bindAddress === '' ? '127.0.0.1' : bindAddress === '::' ? '::1' : bindAddress;
  return isIP(host) === 6 ? `https://[${host}]:${port}` : `https://${host}:${port}`;
}

export function renderKubeconfig(options: KubeconfigOptions): string {
  const user = options.userName ?? 'admin';
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CLUSTER_NAME, cluster: { server: options.server, 'certificate-authority-data': b64(options.certificateAuthority) } }],
    users: [{ name: user, user: { 'client-certificate-data': b64(options.clientCertificate), 'client-key-data': b64(options.clientKey) } }],
    contexts: [{ name: options.contextName ?? ADMIN_CONTEXT, context: { cluster: CLUSTER_NAME, user } }],
    'current-context': options.contextName ?? ADMIN_CONTEXT,
    preferences: {},
  };
  return YAML.stringify(doc, { lineWidth: 0 });
}

/** Write the kubeconfig unless the file already holds exactly this content; true when written. */
export async function writeKubeconfig(file: string, content: string): Promise<boolean> {
  const current = await readFile(file, 'utf8').catch(() => undefined);
  if (current === content) return false;
  await writeFile(file, content, { mode: 0o600 });
  return true;
}

/** What a process presents to the core: the CA that verifies it, and a client certificate or a bearer token. */
export interface KubeconfigCredentials {
  server?: string;
  certificateAuthority?: string;
  clientCertificate?: string;
  clientKey?: string;
  token?: string;
}

/**
 * The credentials of a kubeconfig's current context, as client-go reads them: the cluster's CA
 * (`certificate-authority-data` or a file), the user's client certificate and key (`-data` or
 * files) or token (`token` or `tokenFile`). Relative paths are relative to the kubeconfig.
 */
export async function readKubeconfigCredentials(file: string): Promise<KubeconfigCredentials> {
  const dir = path.dirname(path.resolve(file));
  let doc: unknown;
  try {
    doc = YAML.parse(await readFile(file, 'utf8'));
  } catch (err) {
    throw new Error(`kubeconfig ${JSON.stringify(file)}: ${(err as Error).message}`);
  }
  const fail = (message: string): never => {
    throw new Error(`kubeconfig ${JSON.stringify(file)}: ${message}`);
  };
  const record = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
  const named = (section: string, name: unknown): Record<string, unknown> => {
    const items = Array.isArray(record(doc)[section]) ? (record(doc)[section] as unknown[]) : [];
    const found = items.map(record).find((i) => i.name === name);
    if (!found) fail(`no ${section.replace(/s$/, '')} named ${JSON.stringify(name)}`);
    return found!;
  };
  const current = record(doc)['current-context'];
  if (typeof current !== 'string' || !current) fail('no current-context');
  const context = record(named('contexts', current).context);
  const cluster = record(named('clusters', context.cluster).cluster);
  const user = record(named('users', context.user).user);
  const material = async (holder: Record<string, unknown>, key: string): Promise<string | undefined> => {
    const data = holder[`${key}-data`];
    if (typeof data === 'string' && data) return Buffer.from(data, 'base64').toString('utf8');
    const ref = holder[key];
    if (typeof ref !== 'string' || !ref) return undefined;
    try {
      return await readFile(path.resolve(dir, ref), 'utf8');
    } catch (err) {
      return fail(`${key}: ${(err as Error).message}`);
    }
  };
  const credentials: KubeconfigCredentials = {};
  if (typeof cluster.server === 'string') credentials.server = cluster.server;
  const ca = await material(cluster, 'certificate-authority');
  if (ca) credentials.certificateAuthority = ca;
  const cert = await material(user, 'client-certificate');
  const key = await material(user, 'client-key');
  if ((cert === undefined) !== (key === undefined)) fail('a client certificate needs both client-certificate and client-key');
  if (cert && key) {
    credentials.clientCertificate = cert;
    credentials.clientKey = key;
  }
  if (typeof user.token === 'string' && user.token) credentials.token = user.token;
  else if (typeof user.tokenFile === 'string' && user.tokenFile) {
    try {
      credentials.token = (await readFile(path.resolve(dir, user.tokenFile), 'utf8')).trim();
    } catch (err) {
      fail(`tokenFile: ${(err as Error).message}`);
    }
  }
  if (!credentials.clientCertificate && !credentials.token) fail(`user ${JSON.stringify(context.user)} has neither a client certificate nor a token`);
  return credentials;
}
