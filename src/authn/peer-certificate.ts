/**
 * A client certificate as a door presents it to the chain. The HTTPS listener lets node's TLS
 * layer verify the chain (it reports `authorized`); the gRPC transport only hands over the leaf
 * certificate, so it is checked here against the client CA bundle: signed by one of the CAs
 * and within its validity dates.
 */
import { X509Certificate } from 'node:crypto';
import type { PeerCertificate as TlsPeerCertificate } from 'node:tls';
import type { PeerCertificate } from './types';

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The CA certificates of a PEM bundle. */
export function parseCaBundle(pem: string | Buffer): X509Certificate[] {
  const text = pem.toString();
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}

/** Subject, organizations and usages of a TLS peer certificate, with `verified` as given. */
export function describePeer(cert: TlsPeerCertificate & { ext_key_usage?: string[] }, verified: boolean, verifyError?: string): PeerCertificate | undefined {
  if (!cert?.subject) return undefined;
  const subject = cert.subject as unknown as Record<string, string | string[] | undefined>;
  const result: PeerCertificate = { verified, commonName: asList(subject.CN)[0] ?? '', organizations: asList(subject.O) };
  if (!verified && verifyError) result.verifyError = verifyError;
  if (cert.ext_key_usage) result.extKeyUsage = cert.ext_key_usage;
  if (cert.raw) result.der = cert.raw;
  return result;
}

/** Verify a leaf certificate (DER bytes, as the TLS layer gives `raw`) against a CA bundle at `now`. */
export function verifyLeaf(raw: Buffer, cas: readonly X509Certificate[], now: number): { verified: boolean; error?: string } {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(raw);
  } catch {
    return { verified: false, error: 'certificate could not be parsed' };
  }
  if (now < Date.parse(leaf.validFrom)) return { verified: false, error: 'CERT_NOT_YET_VALID' };
  if (now > Date.parse(leaf.validTo)) return { verified: false, error: 'CERT_HAS_EXPIRED' };
  const issuer = cas.find((ca) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey));
  return issuer ? { verified: true } : { verified: false, error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' };
}
