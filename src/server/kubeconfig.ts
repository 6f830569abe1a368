/**
 * `<data-dir>/admin.kubeconfig`: a cluster-admin credential for kubectl and client libraries,
 * pointing at the port actually served. It is rewritten only when its content would change
 * (a new port, new certificates), so an unchanged restart leaves the file alone.
 */
import { readFile, writeFile } from 'node:fs/promises';
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
    contexts: [{ name: ADMIN_CONTEXT, context: { cluster: CLUSTER_NAME, user } }],
    'current-context': ADMIN_CONTEXT,
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
