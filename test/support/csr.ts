/**
 * Certificate signing requests for tests, made with `@peculiar/x509` (P-256 keys unless asked
 * for RSA): the PEM request, its base64 as a CertificateSigningRequest carries it, and the key.
 */
import { webcrypto } from 'node:crypto';
import { x509 } from '../../src/util/x509';
import type { ResourceTarget } from '../../src/core/api';

export interface TestCsr {
  pem: string;
  /** `spec.request` of a CertificateSigningRequest. */
  request: string;
  keyPem: string;
}

export async function makeCsr(subject: string, options: { dns?: string[]; ips?: string[]; rsa?: boolean } = {}): Promise<TestCsr> {
  const lib = x509();
  const algorithm = options.rsa
    ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]), modulusLength: 2048 }
    : { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify'])) as CryptoKeyPair;
  const names = [
    ...(options.dns ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(options.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const csr = await lib.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys,
    signingAlgorithm: algorithm,
    extensions: names.length ? [new lib.SubjectAlternativeNameExtension(names)] : [],
  });
  const pem = `${csr.toString('pem')}\n`;
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey))
    .toString('base64')
    .replace(/.{64}/g, '$&\n');
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${der}${der.endsWith('\n') ? '' : '\n'}-----END PRIVATE KEY-----\n`;
  return { pem, request: Buffer.from(pem).toString('base64'), keyPem };
}

/** The CertificateSigningRequests of the kubernetes profile, one by name, or one's subresource. */
export function csrTarget(name?: string, subresource?: string): ResourceTarget {
  return {
    group: 'certificates.k8s.io',
    version: 'v1',
    resource: 'certificatesigningrequests',
    ...(name ? { name } : {}),
    ...(subresource ? { subresource } : {}),
  };
}
