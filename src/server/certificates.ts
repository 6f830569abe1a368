/**
 * Making certificates with `@peculiar/x509`: the cluster CA and leaves signed by it. Loading
 * the library costs ~16 MB of RSS for good, so the server makes its PKI in a worker thread
 * (`pki-worker.ts`) and loads this module itself only to sign a client certificate on request
 * (a controller-manager process, the library).
 */
import type * as X509Library from '@peculiar/x509';
import { randomBytes, webcrypto } from 'node:crypto';
import { x509 as peculiar } from '../util/x509';
import { readFileSync } from 'node:fs';
import type { CsrSign } from '../controllers';
import { isIP } from 'node:net';

const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;
const CA_LIFETIME_MS = 10 * 365 * DAY_MS;
const LEAF_LIFETIME_MS = 365 * DAY_MS;
/** Backdate notBefore to tolerate clock skew between server and clients. */
const BACKDATE_MS = 60 * 60 * 1000;

/** A certificate and its private key, both PEM (the key PKCS#8). */
export interface PemPair {
  certPem: string;
  keyPem: string;
}

/** A name as the library takes it: `[{ CN: ['admin'] }, { O: ['system:masters'] }]`. */
export type CertificateName = Array<Record<string, string[]>>;

export interface LeafSpec {
  subject: CertificateName;
  usage: 'server' | 'client';
  /** subjectAltName entries: IP addresses and DNS names. */
  names?: string[];
}

/** A signing CA: its certificate as PEM and its private key, imported. */
export interface SigningCa {
  certPem: string;
  key: CryptoKey;
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

/** A PKCS#8 P-256 private key from PEM, for signing. */
export function importSigningKey(keyPem: string): Promise<CryptoKey> {
  return webcrypto.subtle.importKey('pkcs8', derOf(keyPem, 'PRIVATE KEY'), KEY_ALGORITHM, true, ['sign']);
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return bytes.toString('hex');
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(SIGNING_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function pair(made: X509Library.X509Certificate, keys: CryptoKeyPair): Promise<PemPair & { key: CryptoKey }> {
  const keyPem = pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certPem: `${made.toString('pem')}\n`, keyPem, key: keys.privateKey };
}

/** A self-signed CA, valid for ten years. */
async function createCa(now: Date): Promise<PemPair & { key: CryptoKey }> {
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
  return pair(cert, keys);
}

/** A leaf signed by `ca`, valid for a year, on a new key. */
export async function createLeaf(ca: SigningCa, spec: LeafSpec, now: Date): Promise<PemPair> {
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
    extensions.push(
      new x509.SubjectAlternativeNameExtension(spec.names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))),
    );
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
  const { certPem, keyPem } = await pair(cert, keys);
  return { certPem, keyPem };
}

/** What the worker is asked to make: a new CA or one to sign with, and the leaves. */
export interface PkiJob {
  /** The CA to sign with; a new one is made when absent. */
  ca?: PemPair;
  leaves: LeafSpec[];
  nowMs: number;
}

export interface PkiMade {
  ca: PemPair;
  /** Whether `ca` was made by this job. */
  caIsNew: boolean;
  leaves: PemPair[];
}

/** Runs a PKI job here (the worker calls this). */
export async function makePki(job: PkiJob): Promise<PkiMade> {
  const now = new Date(job.nowMs);
  let signing: SigningCa;
  let ca: PemPair;
  if (job.ca) {
    ca = job.ca;
    signing = { certPem: ca.certPem, key: await importSigningKey(ca.keyPem) };
  } else {
    const made = await createCa(now);
    ca = { certPem: made.certPem, keyPem: made.keyPem };
    signing = made;
  }
  const leaves: PemPair[] = [];
  for (const spec of job.leaves) leaves.push(await createLeaf(signing, spec, now));
  return { ca, caIsNew: !job.ca, leaves };
}

/** What a signed request becomes: its validity and usages (upstream's PermissiveSigningPolicy). */
export interface CsrSigning {
  /** The DER PKCS#10 request (its subject, key and subject alternative names are kept). */
  requestDer: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** The request's key usages (`digital signature`, `client auth`, …). */
  usages: readonly string[];
}

const KEY_USAGE_BITS: Record<string, number> = {
  signing: 1,
  'digital signature': 1,
  'content commitment': 2,
  'key encipherment': 4,
  'data encipherment': 8,
  'key agreement': 16,
  'cert sign': 32,
  'crl sign': 64,
  'encipher only': 128,
  'decipher only': 256,
};

const EXT_KEY_USAGE_OIDS: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Sign a certificate request with `ca`; the certificate as PEM. Throws on a usage no certificate can carry. */
export async function signCertificateRequest(ca: SigningCa, signing: CsrSigning): Promise<string> {
  const x509 = peculiar();
  const csr = new x509.Pkcs10CertificateRequest(new Uint8Array(signing.requestDer));
  const caCert = new x509.X509Certificate(ca.certPem);
  let bits = 0;
  const ekus: string[] = [];
  for (const usage of signing.usages) {
    if (usage in KEY_USAGE_BITS) bits |= KEY_USAGE_BITS[usage]!;
    else if (usage in EXT_KEY_USAGE_OIDS) ekus.push(EXT_KEY_USAGE_OIDS[usage]!);
    else throw new Error(`unrecognized usage: ${usage}`);
  }
  const extensions: X509Library.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (bits) extensions.push(new x509.KeyUsagesExtension(bits, true));
  if (ekus.length) extensions.push(new x509.ExtendedKeyUsageExtension([...new Set(ekus)]));
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(caCert));
  const san = csr.getExtension('2.5.29.17') as X509Library.SubjectAlternativeNameExtension | null;
  if (san) {
    const kept = san.names.items.filter((n: X509Library.GeneralName) => n.type === 'dns' || n.type === 'ip' || n.type === 'email' || n.type === 'url');
    if (kept.length) extensions.push(new x509.SubjectAlternativeNameExtension(kept.map((n: X509Library.GeneralName) => ({ type: n.type, value: n.value }))));
  }
  // biome-ignore lint/complexity/useMathMinMax: Dates; Math.min would answer a number
  const notAfter = signing.notAfter < caCert.notAfter ? signing.notAfter : caCert.notAfter;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: csr.subjectName,
    issuer: caCert.subject,
    notBefore: signing.notBefore,
    notAfter,
    signingAlgorithm: SIGNING_ALGORITHM,
    publicKey: csr.publicKey,
    signingKey: ca.key,
    extensions,
  });
  return `${cert.toString('pem')}\n`;
}

/** csrsigning's signer: the CA's certificate, and its key read from `keyFile` when first needed. */
export function caSigner(certPem: string, keyFile: string | { pem: string }): CsrSign {
  let ca: Promise<SigningCa> | undefined;
  return async (signing) => {
    ca ??= importSigningKey(typeof keyFile === 'string' ? readFileSync(keyFile, 'utf8') : keyFile.pem).then((key) => ({ certPem, key }));
    return signCertificateRequest(await ca, signing);
  };
}

/** A self-signed serving certificate for `names` (DNS names and IP addresses), valid for a year from an hour back. */
export async function selfSignedServing(names: readonly string[]): Promise<PemPair> {
  const x509 = peculiar();
  const keys = await newKeys();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: [{ CN: [`${names[0] ?? 'localhost'}@${Math.floor(now / 1000)}`] }],
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + LEAF_LIFETIME_MS),
    signingAlgorithm: SIGNING_ALGORITHM,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(names.map((n) => (isIP(n) ? { type: 'ip' as const, value: n } : { type: 'dns' as const, value: n }))),
    ],
  });
  const { certPem, keyPem } = await pair(cert, keys);
  return { certPem, keyPem };
}
