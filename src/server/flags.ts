/**
 * Command-line flags with kube-apiserver's names (README, "Flags"), in both `--flag value`
 * and `--flag=value` forms. Parsing is a pure function of the arguments (and of `readFile`,
 * for the TLS files it must check): it returns a typed config, the help text, or a typed error
 * naming the flag, so that the entry point refuses to start with a clear message.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { type Vendor, VENDORS, isVendor } from '../naming';
import { FeatureGateError, buildFeatureGates } from '../features';

export interface ServingCertificate {
  certFile: string;
  keyFile: string;
  /** PEM contents, already checked to parse and to match each other. */
  cert: string;
  key: string;
}

export interface ServerConfig {
  bindAddress: string;
  /** 0 picks a free port. */
  securePort: number;
  /** A serving certificate from --tls-cert-file/--tls-private-key-file; otherwise one is generated. */
  servingCertificate?: ServingCertificate;
  /** etcd client URLs; absent means the embedded store under dataDir. */
  etcdServers?: string[];
  dataDir: string;
  vendor: Vendor;
  /** host:port of a remote core; the gateway then calls it over gRPC. */
  coreAddress?: string;
  controllers: string[];
  featureGates: Record<string, boolean>;
  /** --etcd-compaction-interval in milliseconds (either backend); 0 disables compaction. */
  compactionIntervalMs: number;
  /** --watch-cache-window in milliseconds: how long the watch cache keeps recent events. */
  watchCacheWindowMs: number;
}

export interface FlagError {
  /** The flag at fault, as written on the command line (`--secure-port`), or '' for stray arguments. */
  flag: string;
  message: string;
}

export type FlagParseResult = { kind: 'config'; config: ServerConfig } | { kind: 'help'; text: string } | { kind: 'error'; error: FlagError };

export interface FlagIo {
  readFile(path: string): string;
}

const defaultIo: FlagIo = { readFile: (path) => readFileSync(path, 'utf8') };

export const DEFAULTS = {
  bindAddress: '127.0.0.1',
  securePort: 6443,
  dataDir: './data',
  vendor: 'platform' as Vendor,
  controllers: ['*'],
  compactionIntervalMs: 5 * 60_000,
  watchCacheWindowMs: 5 * 60_000,
};

type FlagName =
  | 'bind-address'
  | 'secure-port'
  | 'tls-cert-file'
  | 'tls-private-key-file'
  | 'etcd-servers'
  | 'data-dir'
  | 'vendor'
  | 'core-address'
  | 'controllers'
  | 'feature-gates'
  | 'etcd-compaction-interval'
  | 'watch-cache-window';

const USAGE: Record<FlagName, string> = {
  'bind-address': `The IP address on which to listen for --secure-port. (default ${DEFAULTS.bindAddress})`,
  'secure-port': `The port on which to serve HTTPS with authentication and authorization; 0 picks a free port. (default ${DEFAULTS.securePort})`,
  'tls-cert-file': 'File containing the default x509 serving certificate (PEM). Without it, one is generated under --data-dir.',
  'tls-private-key-file': 'File containing the default x509 private key matching --tls-cert-file.',
  'etcd-servers': 'Comma-separated list of etcd servers to connect with (scheme://ip:port). Without it, the embedded store under --data-dir is used.',
  'data-dir': `Directory for the embedded store, the generated PKI and admin.kubeconfig. (default ${DEFAULTS.dataDir})`,
  vendor: `Naming profile of the served API: ${VENDORS.join(' or ')}. (default ${DEFAULTS.vendor})`,
  'core-address': 'host:port of a remote core; the gateway then serves it as a pure gRPC client.',
  controllers: "A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables 'foo', '-foo' disables 'foo'. (default *)",
  'etcd-compaction-interval': 'The interval of compaction requests to the store (either backend), a duration such as 5m0s; 0 disables compaction. (default 5m0s)',
  'watch-cache-window': 'How long the watch cache keeps recent events for watches that resume from an older resourceVersion, a duration such as 5m0s. (default 5m0s)',
  'feature-gates': 'A set of key=value pairs that describe feature gates for alpha/experimental features, e.g. A=true,B=false.',
};

export function helpText(): string {
  const lines = ['Usage: keelson [flags]', '', 'Flags:'];
  for (const [name, usage] of Object.entries(USAGE)) lines.push(`      --${name} string`.padEnd(40) + usage);
  lines.push('  -h, --help'.padEnd(40) + 'help for keelson');
  return `${lines.join('\n')}\n`;
}

class FlagFailure extends Error {
  constructor(readonly flag: string, message: string) {
    super(message);
  }
}

function invalid(flag: FlagName, value: string, reason: string): FlagFailure {
  return new FlagFailure(`--${flag}`, `invalid argument ${JSON.stringify(value)} for "--${flag}" flag: ${reason}`);
}

/** Go's strconv.ParseBool, which feature gates use. */
function parseGoBool(value: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

export function parseFeatureGates(value: string): Record<string, boolean> {
  const gates: Record<string, boolean> = {};
  for (const part of value.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq < 0) throw invalid('feature-gates', value, `missing bool value for ${item}`);
    const name = item.slice(0, eq).trim();
    const raw = item.slice(eq + 1).trim();
    if (!name) throw invalid('feature-gates', value, `missing feature gate name in ${JSON.stringify(item)}`);
    const b = parseGoBool(raw);
    if (b === undefined) throw invalid('feature-gates', value, `invalid value of ${name}=${raw}, err: strconv.ParseBool: parsing ${JSON.stringify(raw)}: invalid syntax`);
    gates[name] = b;
  }
  return gates;
}

/** The syntax, then the catalog: unknown gates and disabling a locked GA gate refuse to start (docs/API.md, "Feature gates"). */
function parseKnownFeatureGates(value: string): Record<string, boolean> {
  const gates = parseFeatureGates(value);
  try {
    buildFeatureGates(gates);
  } catch (err) {
    if (err instanceof FeatureGateError) throw invalid('feature-gates', value, err.message);
    throw err;
  }
  return gates;
}

function parsePort(flag: FlagName, value: string, min: number): number {
  if (!/^\d+$/.test(value)) throw invalid(flag, value, `strconv.ParseInt: parsing ${JSON.stringify(value)}: invalid syntax`);
  const n = Number(value);
  if (n < min || n > 65535) throw invalid(flag, value, `must be between ${min} and 65535, inclusive`);
  return n;
}

function parseList(flag: FlagName, value: string): string[] {
  const items = value.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) throw invalid(flag, value, 'empty element in list');
  return items;
}

function parseEtcdServers(value: string): string[] {
  const urls = parseList('etcd-servers', value);
  for (const u of urls) {
    let parsed: URL;
    try {
      parsed = new URL(u);
    } catch {
      throw invalid('etcd-servers', value, `${JSON.stringify(u)} is not a URL`);
    }
    if (!['http:', 'https:', 'unix:', 'unixs:'].includes(parsed.protocol)) {
      throw invalid('etcd-servers', value, `${JSON.stringify(u)} must use http, https, unix or unixs`);
    }
  }
  return urls;
}

function parseHostPort(flag: FlagName, value: string): string {
  const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(value);
  if (!m) throw invalid(flag, value, 'must be host:port');
  parsePort(flag, m[2], 1);
  return value;
}

function loadServingCertificate(certFile: string, keyFile: string, io: FlagIo): ServingCertificate {
  const read = (flag: FlagName, path: string) => {
    try {
      return io.readFile(path);
    } catch (err) {
      throw new FlagFailure(`--${flag}`, `--${flag}: cannot read ${JSON.stringify(path)}: ${(err as Error).message}`);
    }
  };
  const cert = read('tls-cert-file', certFile);
  const key = read('tls-private-key-file', keyFile);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new FlagFailure('--tls-cert-file', `--tls-cert-file: ${JSON.stringify(certFile)} holds no PEM certificate: ${(err as Error).message}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new FlagFailure('--tls-private-key-file', `--tls-private-key-file: ${JSON.stringify(keyFile)} holds no PEM private key: ${(err as Error).message}`);
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new FlagFailure('--tls-private-key-file', `--tls-private-key-file: the key in ${JSON.stringify(keyFile)} does not match the certificate in ${JSON.stringify(certFile)}`);
  }
  return { certFile, keyFile, cert, key };
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`5m0s`, `90s`, `1h30m`, `0`) in milliseconds, as kube-apiserver's duration flags take. */
export function parseDuration(flag: FlagName, value: string): number {
  if (value === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed === 0 || consumed !== value.length) throw invalid(flag, value, `time: invalid duration ${JSON.stringify(value)}`);
  return total;
}

/** Parse `argv` (without the node and script paths). */
export function parseFlags(argv: readonly string[], io: FlagIo = defaultIo): FlagParseResult {
  const values = new Map<FlagName, string>();
  try {
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i];
      if (arg === '--help' || arg === '-h') return { kind: 'help', text: helpText() };
      if (!arg.startsWith('--')) throw new FlagFailure('', `unexpected argument ${JSON.stringify(arg)}; every option is a --flag`);
      const eq = arg.indexOf('=');
      const name = (eq < 0 ? arg.slice(2) : arg.slice(2, eq)) as FlagName;
      if (!(name in USAGE)) throw new FlagFailure(eq < 0 ? arg : arg.slice(0, eq), `unknown flag: ${eq < 0 ? arg : arg.slice(0, eq)}`);
      let value: string;
      if (eq >= 0) {
        value = arg.slice(eq + 1);
      } else {
        if (i + 1 >= argv.length) throw new FlagFailure(`--${name}`, `flag needs an argument: --${name}`);
        value = argv[++i];
      }
      values.set(name, value);
    }
    return { kind: 'config', config: buildConfig(values, io) };
  } catch (err) {
    if (err instanceof FlagFailure) return { kind: 'error', error: { flag: err.flag, message: err.message } };
    throw err;
  }
}

function buildConfig(values: Map<FlagName, string>, io: FlagIo): ServerConfig {
  const config: ServerConfig = {
    bindAddress: DEFAULTS.bindAddress,
    securePort: DEFAULTS.securePort,
    dataDir: DEFAULTS.dataDir,
    vendor: DEFAULTS.vendor,
    controllers: [...DEFAULTS.controllers],
    featureGates: {},
    compactionIntervalMs: DEFAULTS.compactionIntervalMs,
    watchCacheWindowMs: DEFAULTS.watchCacheWindowMs,
  };
  for (const [name, value] of values) {
    switch (name) {
      case 'bind-address':
        if (!isIP(value)) throw invalid(name, value, 'must be an IP address');
        config.bindAddress = value;
        break;
      case 'secure-port':
        config.securePort = parsePort(name, value, 0);
        break;
      case 'etcd-servers':
        config.etcdServers = parseEtcdServers(value);
        break;
      case 'data-dir':
        if (!value) throw invalid(name, value, 'must not be empty');
        config.dataDir = value;
        break;
      case 'vendor':
        if (!isVendor(value)) throw invalid(name, value, `must be one of ${VENDORS.join(', ')}`);
        config.vendor = value;
        break;
      case 'core-address':
        config.coreAddress = parseHostPort(name, value);
        break;
      case 'controllers':
        config.controllers = parseList(name, value);
        break;
      case 'feature-gates':
        config.featureGates = parseKnownFeatureGates(value);
        break;
      case 'etcd-compaction-interval':
        config.compactionIntervalMs = parseDuration(name, value);
        break;
      case 'watch-cache-window':
        config.watchCacheWindowMs = parseDuration(name, value);
        if (config.watchCacheWindowMs <= 0) throw invalid(name, value, 'must be positive');
        break;
      case 'tls-cert-file':
      case 'tls-private-key-file':
        if (!value) throw invalid(name, value, 'must not be empty');
        break;
    }
  }
  const certFile = values.get('tls-cert-file');
  const keyFile = values.get('tls-private-key-file');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const missing = certFile === undefined ? '--tls-cert-file' : '--tls-private-key-file';
    throw new FlagFailure(missing, `${missing} is required when ${certFile === undefined ? '--tls-private-key-file' : '--tls-cert-file'} is set: give both or neither`);
  }
  if (certFile !== undefined && keyFile !== undefined) config.servingCertificate = loadServingCertificate(certFile, keyFile, io);
  return config;
}
