/**
 * The cluster's PKI under `--data-dir`, made on first start and reused afterwards (so that
 * `npm start` needs no setup; README, "The two commands"): a CA (`ca.crt`, `ca.key`), a
 * serving certificate for 127.0.0.1, ::1, localhost and the bind address (`serving.crt`,
 * `serving.key`), and an admin client certificate
 * (CN `admin`, O `system:masters`: cluster-admin by the superuser rule) for admin.kubeconfig.
 * A certificate is made again when it is missing, unreadable, not signed by the CA, close to
 * expiry, or (serving) lacks a needed name. P-256 keys, PKCS#8 PEM.
 */
import type * as X509Library from '@peculiar/x509';
import { X509Certificate, randomBytes, webcrypto } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';

let x509Library: typeof X509Library | undefined;

/**
 * `@peculiar/x509`, loaded when a certificate is to be made: checking the ones on disk at each
 * start uses node:crypto, and loading the library costs ~16 MB of RSS for good (docs/BENCHMARKS.md,
 * idle RSS).
 */
function peculiar(): typeof X509Library {
  if (!x509Library) {
    // A require on first use rather than an import: imports load at start.
    require('reflect-metadata');
    const lib = require('@peculiar/x509') as typeof X509Library;
    lib.cryptoProvider.set(webcrypto as unknown as Crypto);
    x509Library = lib;
  }
  return x509Library;
}

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;
const CA_LIFETIME_MS = 10 * 365 * DAY_MS;
const LEAF_LIFETIME_MS = 365 * DAY_MS;
/** Renew leaf certificates this long before they expire. */
const RENEW_BEFORE_MS = 30 * DAY_MS;
/** Backdate notBefore to tolerate clock skew between server and clients. */
const BACKDATE_MS = 60 * 60 * 1000;

export const ADMIN_USER = 'admin';
export const ADMIN_GROUP = 'system:masters';
/** The identity a gateway presents to a remote core's gRPC door (allowed to act for end users by default). */
export const GATEWAY_USER = 'system:keelson-gateway';
/** The controller manager's user (upstream's), for controllers run as a separate process. */
export const CONTROLLER_MANAGER_CERT_USER = 'system:kube-controller-manager';

export interface Pki {
  caCert: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  gatewayCert: string;
  gatewayKey: string;
  controllerManagerCert: string;
  controllerManagerKey: string;
}

export interface EnsurePkiOptions {
  dataDir: string;
  /** IP addresses and DNS names the serving certificate must hold, besides 127.0.0.1, ::1 and localhost. */
  extraServingNames?: string[];
  /** Skip the serving certificate (one was given with --tls-cert-file). */
  skipServing?: boolean;
  now?: () => Date;
  log?: (line: string) => void;
}

interface KeyedCert {
  /** node:crypto's view of the certificate, for the checks. */
  cert: X509Certificate;
  key: CryptoKey;
  certPem: string;
  keyPem: string;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}

function derOf(text: string, label: string): Buffer {
  const m = new RegExp(`-----BEGIN ${label}-----([\\s\\S]*?)-----END ${label}-----`).exec(text);
  if (!m) throw new Error(`no ${label} block`);
  return Buffer.from(m[1].replace(/\s+/g, ''), 'base64');
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
}

/** Canonical text of a SAN entry, so `::1` and `0:0:...:1` compare equal. */
function canonicalName(name: string): string {
  if (isIP(name) === 6) return new URL(`http://[${name}]`).hostname;
  return name.toLowerCase();
}

async function readKeyed(dir: string, base: string): Promise<KeyedCert | undefined> {
  try {
    const certPem = await readFile(path.join(dir, `${base}.crt`), 'utf8');
    const keyPem = await readFile(path.join(dir, `${base}.key`), 'utf8');
    const cert = new X509Certificate(certPem);
    const key = await webcrypto.subtle.importKey('pkcs8', derOf(keyPem, 'PRIVATE KEY'), KEY_ALGORITHM, true, ['sign']);
    return { cert, key, certPem, keyPem };
  } catch {
    return undefined;
  }
}

async function writeKeyed(dir: string, base: string, k: KeyedCert): Promise<void> {
  await writeFile(path.join(dir, `${base}.crt`), k.certPem, { mode: 0o644 });
  await writeFile(path.join(dir, `${base}.key`), k.keyPem, { mode: 0o600 });
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(SIGNING_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function keyed(made: X509Library.X509Certificate, keys: CryptoKeyPair): Promise<KeyedCert> {
  const keyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const certPem = made.toString('pem') + '\n';
  return { cert: new X509Certificate(certPem), key: keys.privateKey, certPem, keyPem };
}

async function createCa(now: Date): Promise<KeyedCert> {
  const x509 = peculiar();
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: ['keelson-ca'] }],
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + CA_LIFETIME_MS),
    signingAlgorithm: SIGNING_ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return keyed(cert, keys);
}

interface LeafSpec {
  subject: X509Library.JsonName;
  usage: 'server' | 'client';
  names?: string[];
}

async function createLeaf(ca: KeyedCert, spec: LeafSpec, now: Date): Promise<KeyedCert> {
  const x509 = peculiar();
  const keys = await newKeys();
  const caCert = new x509.X509Certificate(ca.certPem);
  const extensions: X509Library.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension([spec.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert),
  ];
  if (spec.names?.length) {
    extensions.push(new x509.SubjectAlternativeNameExtension(spec.names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))));
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: spec.subject,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - BACKDATE_MS),
    notAfter: new Date(now.getTime() + LEAF_LIFETIME_MS),
    signingAlgorithm: SIGNING_ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions,
  });
  return keyed(cert, keys);
}

/** Signed by `ca`, valid now and for a while yet, and (when given) holding every name. */
function stillGood(leaf: KeyedCert, ca: KeyedCert, now: Date, names?: string[]): boolean {
  if (!leaf.cert.checkIssued(ca.cert)) return false;
  if (!leaf.cert.verify(ca.cert.publicKey)) return false;
  if (notBefore(leaf.cert) > now.getTime() || notAfter(leaf.cert) - RENEW_BEFORE_MS < now.getTime()) return false;
  if (names) {
    const held = new Set(sanNames(leaf.cert).map(canonicalName));
    if (!names.every((n) => held.has(canonicalName(n)))) return false;
  }
  return true;
}

function notBefore(cert: X509Certificate): number {
  return new Date(cert.validFrom).getTime();
}

function notAfter(cert: X509Certificate): number {
  return new Date(cert.validTo).getTime();
}

/**
 * The DNS names and IP addresses of a certificate's subjectAltName, as node:crypto prints it
 * (`DNS:localhost, IP Address:127.0.0.1`; entries with unusual characters come JSON-quoted).
 */
function sanNames(cert: X509Certificate): string[] {
  const text = cert.subjectAltName;
  if (!text) return [];
  const names: string[] = [];
  for (const m of text.matchAll(/(DNS|IP Address):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g)) {
    const value = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
    names.push(value);
  }
  return names;
}

/** The serving names: loopback, localhost, and any specific (non-wildcard) bind address. */
export function servingNames(extra: readonly string[] = []): string[] {
  const names = ['127.0.0.1', '::1', 'localhost'];
  for (const n of extra) {
    if (n === '0.0.0.0' || n === '::' || !n) continue;
    if (!names.some((m) => canonicalName(m) === canonicalName(n))) names.push(n);
  }
  return names;
}

export async function ensurePki(options: EnsurePkiOptions): Promise<Pki> {
  const dir = options.dataDir;
  const now = (options.now ?? (() => new Date()))();
  const log = options.log ?? (() => {});
  await mkdir(dir, { recursive: true });

  let existingCa = await readKeyed(dir, 'ca');
  let caIsNew = false;
  if (!existingCa || notAfter(existingCa.cert) - RENEW_BEFORE_MS < now.getTime()) {
    existingCa = await createCa(now);
    await writeKeyed(dir, 'ca', existingCa);
    caIsNew = true;
    log(`generated a new cluster CA in ${path.join(dir, 'ca.crt')}`);
  }
  const ca: KeyedCert = existingCa;

  const ensureLeaf = async (base: string, spec: LeafSpec): Promise<KeyedCert> => {
    const existing = caIsNew ? undefined : await readKeyed(dir, base);
    if (existing && stillGood(existing, ca, now, spec.names)) return existing;
    const made = await createLeaf(ca, spec, now);
    await writeKeyed(dir, base, made);
    log(`generated ${path.join(dir, `${base}.crt`)}`);
    return made;
  };

  const serving = options.skipServing
    ? undefined
    : await ensureLeaf('serving', { subject: [{ CN: ['keelson-apiserver'] }], usage: 'server', names: servingNames(options.extraServingNames) });
  const admin = await ensureLeaf('admin', { subject: [{ CN: [ADMIN_USER] }, { O: [ADMIN_GROUP] }], usage: 'client' });
  const gateway = await ensureLeaf('gateway', { subject: [{ CN: [GATEWAY_USER] }], usage: 'client' });
  const controllerManager = await ensureLeaf('controller-manager', { subject: [{ CN: [CONTROLLER_MANAGER_CERT_USER] }], usage: 'client' });
  return {
    caCert: ca.certPem,
    servingCert: serving?.certPem ?? '',
    servingKey: serving?.keyPem ?? '',
    adminCert: admin.certPem,
    adminKey: admin.keyPem,
    gatewayCert: gateway.certPem,
    gatewayKey: gateway.keyPem,
    controllerManagerCert: controllerManager.certPem,
    controllerManagerKey: controllerManager.keyPem,
  };
}

/**
 * A client certificate for `username` in `groups` (CN and O, as the X.509 authenticator reads
 * them), signed with a CA given as PEM: what a controller-manager process started with
 * `--cluster-signing-cert-file`/`--cluster-signing-key-file` issues its scheduler and simulated
 * nodes (upstream's kubelets get theirs from the same signer, through CSRs).
 */
export async function signClientCertificate(caCertPem: string, caKeyPem: string, username: string, groups: readonly string[], now = new Date()): Promise<{ cert: string; key: string }> {
  let ca: KeyedCert;
  try {
    const key = await webcrypto.subtle.importKey('pkcs8', derOf(caKeyPem, 'PRIVATE KEY'), KEY_ALGORITHM, true, ['sign']);
    ca = { cert: new X509Certificate(caCertPem), key, certPem: caCertPem, keyPem: caKeyPem };
  } catch (err) {
    throw new Error(`the signing CA is not a PEM certificate and PKCS#8 P-256 key: ${(err as Error).message}`);
  }
  const subject: X509Library.JsonName = [{ CN: [username] }, ...groups.map((g) => ({ O: [g] }))];
  const leaf = await createLeaf(ca, { subject, usage: 'client' }, now);
  return { cert: leaf.certPem, key: leaf.keyPem };
}
