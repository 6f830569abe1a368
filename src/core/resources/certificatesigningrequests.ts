/**
 * certificates/v1 CertificateSigningRequest, as upstream's CSR strategy and
 * `ValidateCertificateSigningRequest`: cluster-scoped;
 * the requestor's identity is recorded in `spec` at create (whatever the body said) and the
 * request is immutable after; approval and denial go through `/approval` (conditions only),
 * the issued certificate through `/status`; the PKCS#10 request must parse and carry a valid
 * signature.
 */
import { X509Certificate, createPublicKey, verify } from 'node:crypto';
import { rfc3339 } from '../../clock';
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { column, humanDuration, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { fieldErrors, FieldPath, GoLiteral, type FieldError } from '../validation/field-errors';
import { isDns1123Label, isDns1123Subdomain } from '../validation/names';
import { x509 } from '../../util/x509';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource, StrategyContext } from './definition';

export interface CsrCondition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}

export interface CertificateSigningRequest extends ApiObject {
  spec?: {
    /** PEM, base64 in JSON. */
    request?: string;
    signerName?: string;
    expirationSeconds?: number;
    usages?: string[];
    username?: string;
    uid?: string;
    groups?: string[];
    extra?: Record<string, string[]>;
  };
  status?: {
    conditions?: CsrCondition[];
    /** PEM, base64 in JSON. */
    certificate?: string;
  };
}

/** The signers upstream's controller manager serves, under the naming profile's key domain. */
export function builtinSigners(naming: Naming) {
  const signer = (name: string) => `${naming.keyDomain}/${name}`;
  return {
    kubeApiserverClient: signer('kube-apiserver-client'),
    kubeApiserverClientKubelet: signer('kube-apiserver-client-kubelet'),
    kubeletServing: signer('kubelet-serving'),
    legacyUnknown: signer('legacy-unknown'),
  };
}

/** Every key usage upstream accepts, sorted as its NotSupported error lists them. */
export const KEY_USAGES: readonly string[] = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];
const KEY_USAGE_SET = new Set(KEY_USAGES);
/** Condition types that may only be True. */
const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);

/** One PEM block: its type, headers and body (Go's encoding/pem). */
interface PemBlock {
  type: string;
  headers: boolean;
  der: Buffer;
}

/** The PEM blocks of `text` in order, skipping anything between them (as repeated pem.Decode calls do). */
export function pemBlocks(text: string): PemBlock[] {
  const blocks: PemBlock[] = [];
  const re = /-----BEGIN ([^\n-]*)-----\r?\n([\s\S]*?)-----END \1-----/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const body = m[2]!;
    const headers = /^[^\n]*:/m.test(body.split(/\r?\n\r?\n/)[0] ?? '') && /\r?\n\r?\n/.test(body);
    const b64 = headers ? body.slice(body.search(/\r?\n\r?\n/)) : body;
    blocks.push({ type: m[1]!, headers, der: Buffer.from(b64.replace(/\s+/g, ''), 'base64') });
  }
  return blocks;
}

/** What a parsed request says about itself. */
export interface ParsedCsr {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emails: string[];
  uris: string[];
  /** The DER request, for the signer. */
  der: Buffer;
}

/**
 * Parse a PEM request and check its signature (upstream's ParseCSR and CheckSignature); throws
 * with Go's message.
 */
export function parseCertificateRequest(pem: Buffer | string): ParsedCsr {
  const text = typeof pem === 'string' ? pem : pem.toString('latin1');
  const block = pemBlocks(text)[0];
  if (block?.type !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  let csr;
  try {
    csr = new (x509().Pkcs10CertificateRequest)(new Uint8Array(block.der));
  } catch {
    throw new Error('x509: malformed certificate request');
  }
  const alg = csr.signatureAlgorithm as { name: string; hash?: { name: string }; saltLength?: number };
  let ok = false;
  try {
    const key = createPublicKey({ key: Buffer.from(csr.publicKey.rawData), format: 'der', type: 'spki' });
    const hash = alg.hash ? alg.hash.name.replace('-', '').toLowerCase() : null;
    // The signed part is the request's first element (CertificationRequestInfo), as DER.
    const tbs = tbsOf(block.der);
    const signature = Buffer.from(csr.signature);
    ok = alg.name === 'RSA-PSS' ? verify(hash, tbs, { key, padding: 6, saltLength: alg.saltLength ?? 32 }, signature) : verify(hash, tbs, key, signature);
  } catch {
    ok = false;
  }
  if (!ok) {
    if (alg.name === 'ECDSA') throw new Error('x509: ECDSA verification failure');
    if (alg.name === 'Ed25519') throw new Error('x509: Ed25519 verification failure');
    throw new Error('crypto/rsa: verification error');
  }
  const names = csr.getExtension('2.5.29.17') as { names?: { items: Array<{ type: string; value: string }> } } | null;
  const san = (type: string) => (names?.names?.items ?? []).filter((n) => n.type === type).map((n) => n.value);
  return {
    commonName: csr.subjectName.getField('CN')[0] ?? '',
    organizations: csr.subjectName.getField('O'),
    dnsNames: san('dns'),
    ipAddresses: san('ip'),
    emails: san('email'),
    uris: san('url'),
    der: block.der,
  };
}

/** The DER of the first element of a DER SEQUENCE (a request's CertificationRequestInfo). */
function tbsOf(der: Buffer): Buffer {
  const lengthAt = (at: number): [number, number] => {
    const first = der[at]!;
    if (first < 0x80) return [first, at + 1];
    const n = first & 0x7f;
    let len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + der[at + 1 + i]!;
    return [len, at + 1 + n];
  };
  const [, inner] = lengthAt(1);
  const [len, body] = lengthAt(inner + 1);
  return der.subarray(inner, body + len);
}

/** Go's %#v of a []byte, as a field error prints an invalid request. */
function goBytes(bytes: Buffer): GoLiteral {
  return new GoLiteral(`[]byte{${[...bytes].map((b) => `0x${b.toString(16)}`).join(', ')}}`);
}

/** upstream's validateCertificate: one or more CERTIFICATE blocks, no headers, each a certificate. */
function certificateError(pem: Buffer): string | undefined {
  if (pem.length === 0) return undefined;
  const blocks = pemBlocks(pem.toString('latin1'));
  for (const block of blocks) {
    if (block.type !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(block.type)}`;
    if (block.headers) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(block.der);
    } catch {
      return 'x509: malformed certificate';
    }
  }
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  return undefined;
}

/** upstream's ValidateSignerName. */
export function validateSignerName(path: FieldPath, signerName: string): FieldError[] {
  if (signerName === '') return [fieldErrors.required(path)];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [fieldErrors.invalid(path, signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const errs: FieldError[] = [];
  const [domain, rest] = segments as [string, string];
  if (domain.length > 253) errs.push(fieldErrors.tooLong(path, 253));
  const domainLabels = domain.split('.');
  for (const label of domainLabels) {
    const problems = isDns1123Label(label);
    if (problems.length > 0) {
      for (const p of problems) errs.push(fieldErrors.invalid(path, domain, `validating label ${JSON.stringify(label)}: ${p}`));
      break;
    }
  }
  if (domainLabels.length < 2) errs.push(fieldErrors.invalid(path, domain, 'should be a domain with at least two segments separated by dots'));
  for (const label of rest.split('.')) {
    const problems = isDns1123Subdomain(label);
    if (problems.length > 0) {
      for (const p of problems) errs.push(fieldErrors.invalid(path, rest, `validating label ${JSON.stringify(label)}: ${p}`));
      break;
    }
  }
  const max = 253 + (253 + 63 + 1) + 1;
  if (signerName.length > max) errs.push(fieldErrors.tooLong(path, max));
  return errs;
}

interface Options {
  settingApproval?: boolean;
  settingCertificate?: boolean;
}

const decode = (b64: string | undefined) => Buffer.from(b64 ?? '', 'base64');
const conditionsOf = (csr: CertificateSigningRequest) => csr.status?.conditions ?? [];
const ofType = (csr: CertificateSigningRequest, type: string) => conditionsOf(csr).filter((c) => c.type === type);

/** upstream's validateCertificateSigningRequest, with what an update tolerates from the stored object. */
function validateCsr(csr: CertificateSigningRequest, old: CertificateSigningRequest | undefined, naming: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const spec = FieldPath.root('spec');
  const request = decode(csr.spec?.request);
  try {
    parseCertificateRequest(request);
  } catch (err) {
    errs.push(fieldErrors.invalid(spec.child('request'), goBytes(request), (err as Error).message));
  }
  const usages = csr.spec?.usages ?? [];
  if (usages.length === 0) errs.push(fieldErrors.required(spec.child('usages')));
  const oldUsages = old?.spec?.usages ?? [];
  if (!(old && oldUsages.some((u) => !KEY_USAGE_SET.has(u)))) {
    usages.forEach((u, i) => {
      if (!KEY_USAGE_SET.has(u)) errs.push(fieldErrors.notSupported(spec.child('usages').index(i), u, KEY_USAGES));
    });
  }
  if (!(old && new Set(oldUsages).size !== oldUsages.length)) {
    const seen = new Set<string>();
    usages.forEach((u, i) => {
      if (seen.has(u)) errs.push(fieldErrors.duplicate(spec.child('usages').index(i), u));
      seen.add(u);
    });
  }
  const signerName = csr.spec?.signerName ?? '';
  const legacy = builtinSigners(naming).legacyUnknown;
  if (signerName === legacy && old?.spec?.signerName !== legacy) {
    errs.push(fieldErrors.invalid(spec.child('signerName'), signerName, 'the legacy signerName is not allowed via this API version'));
  } else {
    errs.push(...validateSignerName(spec.child('signerName'), signerName));
  }
  const expiration = csr.spec?.expirationSeconds;
  if (expiration !== undefined && expiration < 600) {
    errs.push(fieldErrors.invalid(spec.child('expirationSeconds'), expiration, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  errs.push(...validateConditions(csr, old));
  const certificate = decode(csr.status?.certificate);
  const oldCertificate = decode(old?.status?.certificate);
  const arbitrary = old !== undefined && (certificate.equals(oldCertificate) || certificateError(oldCertificate) !== undefined);
  if (!arbitrary) {
    const problem = certificateError(certificate);
    if (problem) errs.push(fieldErrors.invalid(FieldPath.root('status', 'certificate'), '<certificate data>', problem));
  }
  return errs;
}

function validateConditions(csr: CertificateSigningRequest, old: CertificateSigningRequest | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const path = FieldPath.root('status', 'conditions');
  const oldConditions = old ? conditionsOf(old) : [];
  const allowEmptyType = oldConditions.some((c) => !c.type);
  const allowDuplicates = new Set(oldConditions.map((c) => c.type)).size !== oldConditions.length;
  const allowBoth = oldConditions.some((c) => c.type === 'Approved') && oldConditions.some((c) => c.type === 'Denied');
  const seen = new Set<string>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const at = path.index(i);
    const type = c.type ?? '';
    if (!allowEmptyType && type === '') errs.push(fieldErrors.required(at.child('type')));
    const allowed = TRUE_ONLY.has(type) ? ['True'] : ['False', 'True', 'Unknown'];
    if (!c.status) errs.push(fieldErrors.required(at.child('status')));
    else if (!allowed.includes(c.status)) errs.push(fieldErrors.notSupported(at.child('status'), c.status, allowed));
    if (!allowBoth) {
      if (type === 'Approved') {
        approved = true;
        if (denied) errs.push(fieldErrors.invalid(at.child('type'), type, 'Approved and Denied conditions are mutually exclusive'));
      } else if (type === 'Denied') {
        denied = true;
        if (approved) errs.push(fieldErrors.invalid(at.child('type'), type, 'Approved and Denied conditions are mutually exclusive'));
      }
    }
    if (!allowDuplicates) {
      if (seen.has(type)) errs.push(fieldErrors.duplicate(at.child('type'), type));
      seen.add(type);
    }
  });
  return errs;
}

/** upstream's validateCertificateSigningRequestUpdate. */
function validateCsrUpdate(csr: CertificateSigningRequest, old: CertificateSigningRequest, opts: Options, naming: Naming): FieldError[] {
  const errs = validateCsr(csr, old, naming);
  const path = FieldPath.root('status', 'conditions');
  for (const type of ['Approved', 'Denied', 'Failed']) {
    if (ofType(csr, type).length < ofType(old, type).length)
      errs.push(fieldErrors.forbidden(path, `updates may not remove a condition of type ${JSON.stringify(type)}`));
  }
  if (!opts.settingApproval) {
    for (const type of ['Approved', 'Denied']) {
      const before = ofType(old, type);
      const after = ofType(csr, type);
      if (after.length > before.length) errs.push(fieldErrors.forbidden(path, `updates may not add a condition of type ${JSON.stringify(type)}`));
      else if (after.length === before.length && JSON.stringify(after) !== JSON.stringify(before)) {
        errs.push(fieldErrors.forbidden(path, `updates may not modify a condition of type ${JSON.stringify(type)}`));
      }
    }
  }
  if (!decode(csr.status?.certificate).equals(decode(old.status?.certificate))) {
    const certPath = FieldPath.root('status', 'certificate');
    if (!opts.settingCertificate) errs.push(fieldErrors.forbidden(certPath, 'updates may not set certificate content'));
    else if (old.status?.certificate) errs.push(fieldErrors.forbidden(certPath, 'updates may not modify existing certificate content'));
  }
  return errs;
}

/** Missing condition times: now, or the last transition of the same type and status before. */
function populateConditionTimestamps(csr: CertificateSigningRequest, old: CertificateSigningRequest, ctx: StrategyContext): void {
  const now = rfc3339(ctx.now);
  for (const c of conditionsOf(csr)) {
    c.lastUpdateTime ||= now;
    if (!c.lastTransitionTime) {
      const before = conditionsOf(old).find((o) => o.type === c.type && o.status === c.status && o.lastTransitionTime);
      c.lastTransitionTime = before?.lastTransitionTime ?? now;
    }
  }
}

/** `/status` keeps the stored Approved and Denied conditions where the update has as many of them. */
function preserveConditions(csr: CertificateSigningRequest, old: CertificateSigningRequest, type: string): void {
  const oldAt = conditionsOf(old).flatMap((c, i) => (c.type === type ? [i] : []));
  const newAt = conditionsOf(csr).flatMap((c, i) => (c.type === type ? [i] : []));
  if (oldAt.length !== newAt.length) return;
  newAt.forEach((at, i) => (csr.status!.conditions![at] = { ...conditionsOf(old)[oldAt[i]!] }));
}

/** kubectl's CONDITION column: Approved, Denied or Pending, then Failed and Issued. */
export function csrCondition(csr: CertificateSigningRequest): string {
  const types = new Set(conditionsOf(csr).map((c) => c.type));
  let status = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) status += ',Failed';
  if (csr.status?.certificate) status += ',Issued';
  return status;
}

const CSR_TABLE: TableDefinition<CertificateSigningRequest> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column('SignerName', 'string', 'The signer the request asks for.'),
    column('Requestor', 'string', 'The user that created the request.'),
    column('RequestedDuration', 'string', 'The validity the request asks for.'),
    column('Condition', 'string', 'Approved, Denied or Pending, and whether the signer failed or issued the certificate.'),
  ],
  row: (csr, { now }) => ({
    cells: [
      csr.metadata?.name ?? '',
      since(csr.metadata?.creationTimestamp, now),
      csr.spec?.signerName || '<none>',
      csr.spec?.username ?? '',
      csr.spec?.expirationSeconds !== undefined ? humanDuration(csr.spec.expirationSeconds * 1000) : '<none>',
      csrCondition(csr),
    ],
  }),
};

export const defineCertificateSigningRequests: DefineResource = (naming) =>
  defineTyped<CertificateSigningRequest>({
    group: naming.groups.certificates,
    version: 'v1',
    kind: 'CertificateSigningRequest',
    resource: 'certificatesigningrequests',
    singular: 'certificatesigningrequest',
    namespaced: false,
    shortNames: ['csr'],
    verbs: STANDARD_VERBS,
    nameRule: 'pathSegment',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    prepareForCreate: (csr, ctx) => {
      const spec = (csr.spec ??= {});
      delete spec.username;
      delete spec.uid;
      delete spec.groups;
      delete spec.extra;
      const user = ctx.user;
      if (user) {
        if (user.username) spec.username = user.username;
        if (user.uid) spec.uid = user.uid;
        if (user.groups.length > 0) spec.groups = [...user.groups];
        if (user.extra && Object.keys(user.extra).length > 0) spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
      }
      // Nobody creates a request already approved or issued.
      csr.status = {};
    },
    prepareForUpdate: (csr, old) => {
      csr.spec = old.spec;
      csr.status = old.status;
    },
    validate: (csr, ctx) => validateCsr(csr, undefined, ctx.naming),
    validateOnlyOnCreate: true,
    validateUpdate: (csr, old, ctx) => validateCsrUpdate(csr, old, {}, ctx.naming),
    status: {
      prepareForUpdate: (csr, old, ctx) => {
        csr.spec = old.spec;
        if (csr.status?.conditions) {
          preserveConditions(csr, old, 'Approved');
          preserveConditions(csr, old, 'Denied');
        }
        populateConditionTimestamps(csr, old, ctx);
      },
      validateUpdate: (csr, old, ctx) => validateCsrUpdate(csr, old, { settingCertificate: true }, ctx.naming),
    },
    approval: {
      prepareForUpdate: (csr, old, ctx) => {
        populateConditionTimestamps(csr, old, ctx);
        const conditions = csr.status?.conditions;
        csr.spec = old.spec;
        csr.status = { ...old.status };
        if (conditions) csr.status.conditions = conditions;
        else delete csr.status.conditions;
      },
      validateUpdate: (csr, old, ctx) => validateCsrUpdate(csr, old, { settingApproval: true }, ctx.naming),
    },
    selectableFields: (csr) => ({ 'spec.signerName': csr.spec?.signerName ?? '' }),
    table: CSR_TABLE,
  });
