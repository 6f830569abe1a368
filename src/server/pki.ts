/**
 * The cluster's PKI under `--data-dir`, made on first start and reused afterwards (so that
 * `npm start` needs no setup; README, "The two commands"): a CA (`ca.crt`, `ca.key`), a
 * serving certificate for 127.0.0.1, ::1, localhost and the bind address (`serving.crt`,
 * `serving.key`), and an admin client certificate
 * (CN `admin`, O `system:masters`: cluster-admin by the superuser rule) for admin.kubeconfig.
 * A certificate is made again when it is missing, unreadable, not signed by the CA, close to
 * expiry, or (serving) lacks a needed name. P-256 keys, PKCS#8 PEM.
 */
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { type LeafSpec, type PemPair, type PkiJob, type PkiMade, createLeaf, importSigningKey, makePki } from './certificates';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Renew leaf certificates this long before they expire. */
const RENEW_BEFORE_MS = 30 * DAY_MS;

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

/** A certificate on disk: node:crypto's view of it, for the checks, and its PEM pair. */
interface KeyedCert extends PemPair {
  cert: X509Certificate;
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
    await importSigningKey(keyPem);
    return { cert, certPem, keyPem };
  } catch {
    return undefined;
  }
}

async function writePair(dir: string, base: string, k: PemPair): Promise<void> {
  await writeFile(path.join(dir, `${base}.crt`), k.certPem, { mode: 0o644 });
  await writeFile(path.join(dir, `${base}.key`), k.keyPem, { mode: 0o600 });
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

  // What is on disk and still good is checked here with node:crypto; what is missing or due is
  // made in one worker job.
  const onDisk = await readKeyed(dir, 'ca');
  const ca = onDisk && notAfter(onDisk.cert) - RENEW_BEFORE_MS >= now.getTime() ? onDisk : undefined;
  const wanted: Array<{ base: string; spec: LeafSpec }> = [
    ...(options.skipServing
      ? []
      : [{ base: 'serving', spec: { subject: [{ CN: ['keelson-apiserver'] }], usage: 'server' as const, names: servingNames(options.extraServingNames) } }]),
    { base: 'admin', spec: { subject: [{ CN: [ADMIN_USER] }, { O: [ADMIN_GROUP] }], usage: 'client' } },
    { base: 'gateway', spec: { subject: [{ CN: [GATEWAY_USER] }], usage: 'client' } },
    { base: 'controller-manager', spec: { subject: [{ CN: [CONTROLLER_MANAGER_CERT_USER] }], usage: 'client' } },
  ];
  const leaves = new Map<string, PemPair>();
  const due: typeof wanted = [];
  for (const w of wanted) {
    const existing = ca ? await readKeyed(dir, w.base) : undefined;
    if (existing && stillGood(existing, ca!, now, w.spec.names)) leaves.set(w.base, existing);
    else due.push(w);
  }
  let caPair: PemPair | undefined = ca;
  if (due.length > 0 || !caPair) {
    const made = await runPkiJob({ ...(ca ? { ca: { certPem: ca.certPem, keyPem: ca.keyPem } } : {}), leaves: due.map((w) => w.spec), nowMs: now.getTime() });
    caPair = made.ca;
    if (made.caIsNew) {
      await writePair(dir, 'ca', made.ca);
      log(`generated a new cluster CA in ${path.join(dir, 'ca.crt')}`);
    }
    for (const [i, w] of due.entries()) {
      await writePair(dir, w.base, made.leaves[i]!);
      leaves.set(w.base, made.leaves[i]!);
      log(`generated ${path.join(dir, `${w.base}.crt`)}`);
    }
  }
  const leaf = (base: string): PemPair => leaves.get(base)!;
  return {
    caCert: caPair.certPem,
    servingCert: options.skipServing ? '' : leaf('serving').certPem,
    servingKey: options.skipServing ? '' : leaf('serving').keyPem,
    adminCert: leaf('admin').certPem,
    adminKey: leaf('admin').keyPem,
    gatewayCert: leaf('gateway').certPem,
    gatewayKey: leaf('gateway').keyPem,
    controllerManagerCert: leaf('controller-manager').certPem,
    controllerManagerKey: leaf('controller-manager').keyPem,
  };
}

/**
 * Runs a PKI job in a worker thread, so the X.509 library's memory goes with the thread: a
 * server's idle RSS after a first start is ~9 MB lower (docs/BENCHMARKS.md). Run from the
 * TypeScript sources (the tests, the tools), the job runs in this thread instead: a worker would
 * need a TypeScript loader of its own, ~150 ms per start, and swc's native module crashes the
 * process when a second worker thread loads it with no other thread holding it.
 */
function runPkiJob(job: PkiJob): Promise<PkiMade> {
  if (path.extname(__filename) === '.ts') return makePki(job);
  const worker = new Worker(path.join(__dirname, 'pki-worker.js'), { workerData: job });
  return new Promise<PkiMade>((resolve, reject) => {
    worker.once('message', (answer: { made?: PkiMade; error?: string }) => {
      if (answer.made) resolve(answer.made);
      else reject(new Error(`making the PKI failed: ${answer.error}`));
    });
    worker.once('error', (err) => reject(new Error(`making the PKI failed: ${err.message}`)));
    worker.once('exit', (code) => reject(new Error(`making the PKI failed: its worker thread exited with code ${code}`)));
  });
}

/**
 * A client certificate for `username` in `groups` (CN and O, as the X.509 authenticator reads
 * them), signed with a CA given as PEM: what a controller-manager process started with
 * `--cluster-signing-cert-file`/`--cluster-signing-key-file` issues its scheduler and simulated
 * nodes (upstream's kubelets get theirs from the same signer, through CSRs).
 */
export async function signClientCertificate(
  caCertPem: string,
  caKeyPem: string,
  username: string,
  groups: readonly string[],
  now = new Date(),
): Promise<{ cert: string; key: string }> {
  let key: CryptoKey;
  try {
    key = await importSigningKey(caKeyPem);
    new X509Certificate(caCertPem);
  } catch (err) {
    throw new Error(`the signing CA is not a PEM certificate and PKCS#8 P-256 key: ${(err as Error).message}`);
  }
  const subject = [{ CN: [username] }, ...groups.map((g) => ({ O: [g] }))];
  const leaf = await createLeaf({ certPem: caCertPem, key }, { subject, usage: 'client' }, now);
  return { cert: leaf.certPem, key: leaf.keyPem };
}
