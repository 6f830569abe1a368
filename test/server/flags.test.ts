import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type FlagIo, flagNames, parseFeatureGates, parseFlags } from '../../src/server/flags';
import { FLAGS_DOC_PATH, flagsMarkdown } from '../../tools/flags-doc';

function config(args: string[], io?: FlagIo) {
  const r = parseFlags(args, io);
  if (r.kind !== 'config') throw new Error(`expected a config, got ${JSON.stringify(r)}`);
  return r.config;
}

function error(args: string[], io?: FlagIo) {
  const r = parseFlags(args, io);
  if (r.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(r)}`);
  return r.error;
}

/** A real key pair and self-signed certificate from openssl, for the TLS file checks. */
function tlsFiles(): { dir: string; cert: string; key: string; otherKey: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keelson-flags-'));
  const cert = path.join(dir, 'tls.crt');
  const key = path.join(dir, 'tls.key');
  const otherKey = path.join(dir, 'other.key');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=test', '-days', '1', '-keyout', key, '-out', cert],
    { stdio: 'ignore' },
  );
  execFileSync('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', otherKey], { stdio: 'ignore' });
  return { dir, cert, key, otherKey };
}

describe('flags', () => {
  it('has kube-apiserver-like defaults', () => {
    expect(config([])).toEqual({
      bindAddress: '127.0.0.1',
      clusterSigningDurationMs: 31_536_000_000,
      securePort: 6443,
      serviceClusterIpRange: '10.0.0.0/24',
      serviceNodePortRange: '30000-32767',
      enableAggregatorRouting: false,
      dataDir: './data',
      vendor: 'platform',
      enableAdmissionPlugins: [],
      disableAdmissionPlugins: [],
      admissionPlugins: [
        'NamespaceLifecycle',
        'ServiceAccount',
        'Priority',
        'DefaultTolerationSeconds',
        'CertificateApproval',
        'CertificateSigning',
        'CertificateSubjectRestriction',
        'MutatingAdmissionWebhook',
        'ValidatingAdmissionPolicy',
        'ValidatingAdmissionWebhook',
      ],
      controllers: ['*'],
      simulatedNodes: 1,
      leaderElect: true,
      controllersOnly: false,
      useServiceAccountCredentials: false,
      nodeMonitorPeriodMs: 5_000,
      nodeMonitorGracePeriodMs: 50_000,
      nodeStartupGracePeriodMs: 60_000,
      terminatedPodGcThreshold: 12_500,
      nodeEvictionRate: 0.1,
      secondaryNodeEvictionRate: 0.01,
      largeClusterSizeThreshold: 50,
      unhealthyZoneThreshold: 0.55,
      featureGates: {},
      runtimeConfig: [],
      compactionIntervalMs: 300_000,
      watchCacheWindowMs: 300_000,
      watchCacheMaxBytes: 32 * 1024 * 1024,
      maxRequestsInflight: 400,
      maxMutatingRequestsInflight: 200,
      requestTimeoutMs: 60_000,
      shutdownDelayMs: 0,
      verbosity: 0,
      loggingFormat: 'text',
      auditLogMaxSizeMb: 0,
      auditLogFormat: 'json',
      auditLogCompress: false,
      auditLogMode: 'blocking',
      auditLogBatchBufferSize: 10_000,
      auditLogBatchMaxSize: 1,
      auditLogBatchMaxWaitMs: 0,
      auditLogBatchThrottleEnable: false,
      auditLogBatchThrottleQps: 0,
      auditLogBatchThrottleBurst: 0,
      auditLogTruncateEnabled: false,
      auditLogTruncateMaxBatchSize: 10_485_760,
      auditLogTruncateMaxEventSize: 102_400,
      auditWebhookMode: 'batch',
      auditWebhookInitialBackoffMs: 10_000,
      auditWebhookBatchBufferSize: 10_000,
      auditWebhookBatchMaxSize: 400,
      auditWebhookBatchMaxWaitMs: 30_000,
      auditWebhookBatchThrottleEnable: true,
      auditWebhookBatchThrottleQps: 10,
      auditWebhookBatchThrottleBurst: 15,
      auditWebhookTruncateEnabled: false,
      auditWebhookTruncateMaxBatchSize: 10_485_760,
      auditWebhookTruncateMaxEventSize: 102_400,
      auditLogMaxBackups: 0,
      auditLogMaxAgeDays: 0,
      anonymousAuth: true,
      enableBootstrapTokenAuth: false,
      enablePriorityAndFairness: true,
      eventTtlMs: 3_600_000,
      apiAudiences: [],
      grpcBindAddress: '127.0.0.1',
      requestheaderAllowedNames: [],
      requestheaderUsernameHeaders: [],
      requestheaderUidHeaders: [],
      requestheaderGroupHeaders: [],
      requestheaderExtraHeadersPrefix: [],
      coreOnly: false,
      serviceAccountKeyFiles: [],
      serviceAccountIssuers: [],
      serviceAccountLookup: true,
      oidcUsernameClaim: 'sub',
      oidcRequiredClaims: {},
      oidcSigningAlgs: ['RS256'],
      authenticationTokenWebhookCacheTtlMs: 120_000,
      authenticationTokenWebhookVersion: 'v1beta1',
      authorizationModes: ['RBAC'],
      authorizationWebhookCacheAuthorizedTtlMs: 300000,
      authorizationWebhookCacheUnauthorizedTtlMs: 30000,
      authorizationWebhookVersion: 'v1beta1',
    });
  });

  it('declares each flag once: help lists every flag with its default, and booleans take a bare --flag', () => {
    const r = parseFlags(['--help']);
    const text = r.kind === 'help' ? r.text : '';
    for (const name of flagNames()) expect(text).toMatch(new RegExp(`--${name}\\b`));
    // Every flag with a default shows it, as pflag's help does.
    for (const [flag, shown] of [
      ['secure-port', '6443'],
      ['max-requests-inflight', '400'],
      ['request-timeout', '1m0s'],
      ['logging-format', 'text'],
      ['use-service-account-credentials', 'false'],
      ['v', '0'],
    ]) {
      expect(text).toMatch(new RegExp(`--${flag} .*\\(default ${shown}\\)`));
    }
    expect(text).toContain('  -v, --v int');
    // Names and usage never run together: the usage column starts after the widest name.
    for (const line of text.split('\n').filter((l) => l.startsWith('  '))) expect(line).toMatch(/^ +(-[vh], )?--\S+( \S+)? {3,}\S/);
    expect(text).toMatch(/--secure-port int +.*\(default 6443\)/);
    expect(text).toMatch(/--anonymous-auth +.*\(default true\)/);
    expect(config(['--anonymous-auth=false', '--enable-bootstrap-token-auth'])).toMatchObject({ anonymousAuth: false, enableBootstrapTokenAuth: true });
    expect(error(['--anonymous-auth=maybe'])).toEqual({
      flag: '--anonymous-auth',
      message: 'invalid argument "maybe" for "--anonymous-auth" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
    });
    expect(config(['--grpc-port', '0', '--core-only', '--requestheader-allowed-names', 'gw-a,gw-b'])).toMatchObject({
      grpcPort: 0,
      coreOnly: true,
      requestheaderAllowedNames: ['gw-a', 'gw-b'],
    });
    expect(error(['--core-only'])).toEqual({ flag: '--core-only', message: '--core-only needs --grpc-port: a core-only process serves only the gRPC door' });
  });

  it('takes TLS files for etcd only with --etcd-servers, certificate and key together', () => {
    const f = path.join(os.tmpdir(), `keelson-flags-etcd-${process.pid}.pem`);
    writeFileSync(f, 'pem');
    try {
      const etcd = ['--etcd-servers', 'https://127.0.0.1:2379'];
      expect(config([...etcd, '--etcd-cafile', f, '--etcd-certfile', f, '--etcd-keyfile', f])).toMatchObject({
        etcdCaFile: f,
        etcdCertFile: f,
        etcdKeyFile: f,
      });
      expect(error(['--etcd-cafile', f])).toEqual({ flag: '--etcd-cafile', message: '--etcd-cafile is used only with --etcd-servers' });
      expect(error([...etcd, '--etcd-certfile', f])).toEqual({
        flag: '--etcd-keyfile',
        message: '--etcd-keyfile is required with --etcd-certfile: give both or neither',
      });
      expect(error([...etcd, '--etcd-cafile', '/nonexistent/ca.pem'])).toMatchObject({
        flag: '--etcd-cafile',
        message: expect.stringContaining('cannot read "/nonexistent/ca.pem"'),
      });
    } finally {
      rmSync(f, { force: true });
    }
  });

  it('takes the admission plugin lists as upstream does: order ignored, unknown names and overlaps refused', () => {
    expect(
      config(['--enable-admission-plugins', 'ValidatingAdmissionWebhook,NodeRestriction', '--disable-admission-plugins=ServiceAccount']).admissionPlugins,
    ).toEqual([
      'NamespaceLifecycle',
      'NodeRestriction',
      'Priority',
      'DefaultTolerationSeconds',
      'CertificateApproval',
      'CertificateSigning',
      'CertificateSubjectRestriction',
      'MutatingAdmissionWebhook',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionWebhook',
    ]);
    expect(error(['--enable-admission-plugins', 'Nope'])).toEqual({
      flag: '--enable-admission-plugins',
      message: 'enable-admission-plugins plugin "Nope" is unknown',
    });
    expect(error(['--disable-admission-plugins', 'Nope'])).toEqual({
      flag: '--disable-admission-plugins',
      message: 'disable-admission-plugins plugin "Nope" is unknown',
    });
    expect(error(['--enable-admission-plugins', 'AlwaysDeny', '--disable-admission-plugins', 'AlwaysDeny'])).toEqual({
      flag: '--enable-admission-plugins',
      message: '[AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped',
    });
    expect(error(['--admission-control-config-file', '/nonexistent/admission.yaml'])).toMatchObject({
      flag: '--admission-control-config-file',
      message: expect.stringContaining('ENOENT'),
    });
  });

  it('accepts both --flag value and --flag=value', () => {
    expect(config(['--secure-port', '0', '--bind-address=::1', '--data-dir', '/tmp/x', '--vendor=kubernetes'])).toMatchObject({
      securePort: 0,
      bindAddress: '::1',
      dataDir: '/tmp/x',
      vendor: 'kubernetes',
    });
  });

  it('parses list flags and feature gates', () => {
    expect(
      config([
        '--etcd-servers=http://127.0.0.1:2379,https://10.0.0.1:2379',
        '--controllers',
        '*,-tokencleaner',
        '--feature-gates',
        'WatchList=true, CBORServingAndStorage=false',
      ]),
    ).toMatchObject({
      etcdServers: ['http://127.0.0.1:2379', 'https://10.0.0.1:2379'],
      controllers: ['*', '-tokencleaner'],
      featureGates: { WatchList: true, CBORServingAndStorage: false },
    });
    expect(parseFeatureGates('A=1,B=F')).toEqual({ A: true, B: false });
    expect(config(['--core-address', 'core.local:7070']).coreAddress).toBe('core.local:7070');
  });

  it('answers --help and -h with the usage text', () => {
    const r = parseFlags(['--vendor', 'kubernetes', '--help']);
    expect(r.kind).toBe('help');
    expect(r.kind === 'help' && r.text).toContain('--etcd-servers');
    expect(parseFlags(['-h']).kind).toBe('help');
  });

  it.each([
    [['--bogus'], '--bogus', 'unknown flag: --bogus'],
    [['--bogus=1'], '--bogus', 'unknown flag: --bogus'],
    [['serve'], '', 'unexpected argument "serve"; every option is a --flag'],
    [['--secure-port'], '--secure-port', 'flag needs an argument: --secure-port'],
    [['--secure-port', 'https'], '--secure-port', 'invalid argument "https" for "--secure-port" flag: strconv.ParseInt: parsing "https": invalid syntax'],
    [['--secure-port=70000'], '--secure-port', 'invalid argument "70000" for "--secure-port" flag: must be between 0 and 65535, inclusive'],
    [['--bind-address', 'localhost'], '--bind-address', 'invalid argument "localhost" for "--bind-address" flag: must be an IP address'],
    [['--vendor', 'acme'], '--vendor', 'invalid argument "acme" for "--vendor" flag: must be one of platform, kubernetes'],
    [
      ['--etcd-servers', 'localhost:2379'],
      '--etcd-servers',
      'invalid argument "localhost:2379" for "--etcd-servers" flag: "localhost:2379" must use http, https, unix or unixs',
    ],
    [
      ['--etcd-servers', 'http://a:1,,http://b:2'],
      '--etcd-servers',
      'invalid argument "http://a:1,,http://b:2" for "--etcd-servers" flag: empty element in list',
    ],
    [['--feature-gates', 'A'], '--feature-gates', 'invalid argument "A" for "--feature-gates" flag: missing bool value for A'],
    [
      ['--feature-gates', 'A=yes'],
      '--feature-gates',
      'invalid argument "A=yes" for "--feature-gates" flag: invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax',
    ],
    [['--core-address', 'nowhere'], '--core-address', 'invalid argument "nowhere" for "--core-address" flag: must be host:port'],
    [['--simulated-nodes', '-1'], '--simulated-nodes', 'invalid argument "-1" for "--simulated-nodes" flag: must be an integer from 0 to 2000'],
    [['--simulated-nodes', '2001'], '--simulated-nodes', 'invalid argument "2001" for "--simulated-nodes" flag: must be an integer from 0 to 2000'],
    [['--data-dir='], '--data-dir', 'invalid argument "" for "--data-dir" flag: must not be empty'],
    [['--tls-cert-file', '/x.crt'], '--tls-private-key-file', '--tls-private-key-file is required when --tls-cert-file is set: give both or neither'],
  ])('refuses %j, naming %s', (args, flag, message) => {
    expect(error(args)).toEqual({ flag, message });
  });

  it('reads and checks the serving certificate files', () => {
    const f = tlsFiles();
    const c = config(['--tls-cert-file', f.cert, '--tls-private-key-file', f.key]);
    expect(c.servingCertificate).toMatchObject({ certFile: f.cert, keyFile: f.key });
    expect(c.servingCertificate!.cert).toContain('BEGIN CERTIFICATE');
    expect(error(['--tls-cert-file', path.join(f.dir, 'missing.crt'), '--tls-private-key-file', f.key])).toMatchObject({
      flag: '--tls-cert-file',
      message: expect.stringContaining('cannot read'),
    });
    expect(error(['--tls-cert-file', f.key, '--tls-private-key-file', f.key])).toMatchObject({
      flag: '--tls-cert-file',
      message: expect.stringContaining('holds no PEM certificate'),
    });
    expect(error(['--tls-cert-file', f.cert, '--tls-private-key-file', f.cert])).toMatchObject({
      flag: '--tls-private-key-file',
      message: expect.stringContaining('holds no PEM private key'),
    });
    expect(error(['--tls-cert-file', f.cert, '--tls-private-key-file', f.otherKey])).toMatchObject({
      flag: '--tls-private-key-file',
      message: expect.stringContaining('does not match'),
    });
  });

  it('takes file contents from the injected reader', () => {
    const io: FlagIo = {
      readFile: () => {
        throw new Error('EACCES: permission denied');
      },
    };
    expect(error(['--tls-cert-file', 'a', '--tls-private-key-file', 'b'], io)).toEqual({
      flag: '--tls-cert-file',
      message: '--tls-cert-file: cannot read "a": EACCES: permission denied',
    });
  });
});

describe('front-proxy flags', () => {
  it('takes the request-header lists, with upstream defaults of none', () => {
    const f = tlsFiles();
    const c = config([
      '--requestheader-client-ca-file',
      f.cert,
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers',
      'X-Remote-Group, X-Other-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-allowed-names=front-proxy-client',
    ]);
    expect(c).toMatchObject({
      requestheaderClientCaFile: f.cert,
      requestheaderUsernameHeaders: ['X-Remote-User'],
      requestheaderGroupHeaders: ['X-Remote-Group', 'X-Other-Group'],
      requestheaderExtraHeadersPrefix: ['X-Remote-Extra-'],
      requestheaderAllowedNames: ['front-proxy-client'],
      requestheaderUidHeaders: [],
    });
    expect(config(['--requestheader-username-headers=']).requestheaderUsernameHeaders).toEqual([]);
  });

  it.each([
    [['--requestheader-group-headers', 'X-Remote-Group, '], '--requestheader-group-headers', 'empty value in "requestheader-group-headers"'],
    [['--requestheader-allowed-names', ' '], '--requestheader-allowed-names', 'empty value in "requestheader-allowed-names"'],
    [
      ['--requestheader-uid-headers', 'X-Remote-Uid'],
      '--requestheader-uid-headers',
      '--requestheader-uid-headers requires the "RemoteRequestHeaderUID" feature to be enabled',
    ],
    [
      ['--proxy-client-cert-file', '/x.crt'],
      '--proxy-client-key-file',
      '--proxy-client-key-file is required when --proxy-client-cert-file is set: give both or neither',
    ],
    [
      ['--proxy-client-key-file', '/x.key'],
      '--proxy-client-cert-file',
      '--proxy-client-cert-file is required when --proxy-client-key-file is set: give both or neither',
    ],
  ])('refuses %j, naming %s', (args, flag, message) => {
    expect(error(args)).toEqual({ flag, message });
  });

  it('takes uid headers behind their gate', () => {
    expect(config(['--feature-gates', 'RemoteRequestHeaderUID=true', '--requestheader-uid-headers', 'X-Remote-Uid']).requestheaderUidHeaders).toEqual([
      'X-Remote-Uid',
    ]);
  });

  it('reads the front-proxy CA bundle and refuses one that cannot be read or holds no certificate', () => {
    const f = tlsFiles();
    expect(error(['--requestheader-client-ca-file', path.join(f.dir, 'missing.crt')])).toMatchObject({
      flag: '--requestheader-client-ca-file',
      message: expect.stringContaining('cannot read'),
    });
    expect(error(['--requestheader-client-ca-file', f.key])).toEqual({
      flag: '--requestheader-client-ca-file',
      message: `--requestheader-client-ca-file: ${JSON.stringify(f.key)} holds no PEM certificate`,
    });
  });

  it('loads the proxy client certificate pair and refuses a key that is not its own', () => {
    const f = tlsFiles();
    const c = config(['--proxy-client-cert-file', f.cert, '--proxy-client-key-file', f.key]);
    expect(c.proxyClientCertificate).toMatchObject({ certFile: f.cert, keyFile: f.key });
    expect(c.proxyClientCertificate!.key).toContain('PRIVATE KEY');
    expect(error(['--proxy-client-cert-file', f.cert, '--proxy-client-key-file', f.otherKey])).toMatchObject({
      flag: '--proxy-client-key-file',
      message: expect.stringContaining('--proxy-client-key-file: the key in'),
    });
    expect(error(['--proxy-client-cert-file', f.key, '--proxy-client-key-file', f.key])).toMatchObject({
      flag: '--proxy-client-cert-file',
      message: expect.stringContaining('holds no PEM certificate'),
    });
  });
});

describe('service flags', () => {
  it('take the cluster IP range masked, with leading zeros read as decimal, and empty as the default', () => {
    expect(config(['--service-cluster-ip-range', '10.96.3.7/12']).serviceClusterIpRange).toBe('10.96.0.0/12');
    expect(config(['--service-cluster-ip-range=010.000.0.0/24']).serviceClusterIpRange).toBe('10.0.0.0/24');
    expect(config(['--service-cluster-ip-range', 'fd00:10:96::/112']).serviceClusterIpRange).toBe('fd00:10:96::/112');
    expect(config(['--service-cluster-ip-range=']).serviceClusterIpRange).toBe('10.0.0.0/24');
  });

  it("refuse a cluster IP range as kube-apiserver's completion and validation do", () => {
    const message = (value: string) => error(['--service-cluster-ip-range', value]).message;
    expect(message('10.0.0.0')).toBe('service-cluster-ip-range[0] is not a valid cidr');
    expect(message('10.0.0.0/33')).toBe('service-cluster-ip-range[0] is not a valid cidr');
    expect(message('10.0.0.0/30')).toBe(
      'error determining service IP ranges for primary service cidr: the service cluster IP range must be at least 8 IP addresses',
    );
    expect(message('10.0.0.0/11')).toBe('specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12');
    expect(message('fd00::/64')).toBe('specified --service-cluster-ip-range is too large; for 128-bit addresses, the mask must be >= 108');
    expect(message('10.0.0.0/24,nope')).toBe('service-cluster-ip-range[1] is not an ip net');
    expect(message('10.0.0.0/24,10.1.0.0/24')).toBe('--service-cluster-ip-range[0] and --service-cluster-ip-range[1] must be of different IP family');
    expect(message('10.0.0.0/24,fd00::/64,fd01::/112')).toBe(
      '[--service-cluster-ip-range must not contain more than two entries, specified --service-cluster-ip-range[1] is too large; for 128-bit addresses, the mask must be >= 108]',
    );
    // A valid dual-stack pair: Keelson serves one family.
    expect(message('10.0.0.0/24,fd00::/112')).toMatch(/^--service-cluster-ip-range: dual-stack ranges are not served/);
    expect(error(['--service-cluster-ip-range', '10.0.0.0/30']).flag).toBe('--service-cluster-ip-range');
  });

  it("want the advertised address in the range's family, as the kubernetes Service is single-stack", () => {
    expect(error(['--advertise-address', '192.168.1.2', '--service-cluster-ip-range', 'fd00::/112']).message).toBe(
      'service IP family "fd00::/112" must match public address family "192.168.1.2"',
    );
    expect(config(['--advertise-address', 'fd00::2', '--service-cluster-ip-range', 'fd00::/112']).advertiseAddress).toBe('fd00::2');
  });

  it("parse the node port range as upstream's PortRange: first-last, first+offset, one port, empty for the default", () => {
    const range = (value: string) => config(['--service-node-port-range', value]).serviceNodePortRange;
    expect(range('30000-30100')).toBe('30000-30100');
    expect(range(' 30000+100 ')).toBe('30000-30100');
    expect(range('31000')).toBe('31000-31000');
    expect(range('')).toBe('30000-32767');
    const message = (value: string) => error([`--service-node-port-range=${value}`]).message;
    expect(message('abc')).toBe('invalid argument "abc" for "--service-node-port-range" flag: strconv.Atoi: parsing "abc": invalid syntax');
    expect(message('30000-')).toBe('invalid argument "30000-" for "--service-node-port-range" flag: strconv.Atoi: parsing "": invalid syntax');
    expect(message('1-2+3')).toBe('invalid argument "1-2+3" for "--service-node-port-range" flag: unable to parse port range: 1-2+3');
    expect(message('30000-70000')).toBe(
      'invalid argument "30000-70000" for "--service-node-port-range" flag: the port range cannot be greater than 65535: 30000-70000',
    );
    expect(message('65000+1000')).toBe(
      'invalid argument "65000+1000" for "--service-node-port-range" flag: the port range cannot be greater than 65535: 65000+1000',
    );
    expect(message('32000-31000')).toBe(
      'invalid argument "32000-31000" for "--service-node-port-range" flag: end port cannot be less than start port: 32000-31000',
    );
    expect(message('99999999999999999999')).toBe(
      'invalid argument "99999999999999999999" for "--service-node-port-range" flag: strconv.Atoi: parsing "99999999999999999999": value out of range',
    );
  });

  it('take --enable-aggregator-routing as a bool, bare meaning true', () => {
    expect(config(['--enable-aggregator-routing']).enableAggregatorRouting).toBe(true);
    expect(config(['--enable-aggregator-routing=false']).enableAggregatorRouting).toBe(false);
    expect(error(['--enable-aggregator-routing=yes']).message).toBe(
      'invalid argument "yes" for "--enable-aggregator-routing" flag: strconv.ParseBool: parsing "yes": invalid syntax',
    );
  });
});

describe('controller flags', () => {
  test('--controllers takes known names, * and -name, and an empty value enables none', () => {
    expect(config(['--controllers=']).controllers).toEqual([]);
    expect(config(['--controllers', '*,-replicaset,tokencleaner']).controllers).toEqual(['*', '-replicaset', 'tokencleaner']);
    expect(error(['--controllers', '*,deployment'])).toEqual({
      flag: '--controllers',
      message: 'invalid argument "*,deployment" for "--controllers" flag: "deployment" is not in the list of known controllers',
    });
    expect(error(['--controllers', '-nosuch']).message).toMatch(/"nosuch" is not in the list of known controllers/);
  });

  test('--controllers-only needs a remote core and credentials, and signing files for simulated nodes', () => {
    const base = ['--controllers-only', '--core-address', '127.0.0.1:7443', '--kubeconfig', '/tmp/cm.kubeconfig'];
    expect(error(['--controllers-only', '--kubeconfig', 'k'])).toMatchObject({
      flag: '--controllers-only',
      message: expect.stringMatching(/needs --core-address/),
    });
    expect(error(['--controllers-only', '--core-address', '127.0.0.1:7443'])).toMatchObject({ flag: '--kubeconfig' });
    expect(error([...base, '--core-only', '--grpc-port', '0']).message).toMatch(/exclude each other/);
    expect(error(base)).toMatchObject({
      flag: '--simulated-nodes',
      message: expect.stringMatching(/needs --cluster-signing-cert-file and --cluster-signing-key-file/),
    });
    // The controller manager's secure port: upstream's 10257 unless given.
    expect(config([...base, '--simulated-nodes', '0'])).toMatchObject({
      controllersOnly: true,
      kubeconfig: '/tmp/cm.kubeconfig',
      simulatedNodes: 0,
      securePort: 10257,
    });
    expect(config([...base, '--simulated-nodes', '0', '--secure-port', '0']).securePort).toBe(0);
    expect(
      config([...base, '--cluster-signing-cert-file', 'ca.crt', '--cluster-signing-key-file', 'ca.key', '--use-service-account-credentials']),
    ).toMatchObject({
      clusterSigningCertFile: 'ca.crt',
      clusterSigningKeyFile: 'ca.key',
      useServiceAccountCredentials: true,
      simulatedNodes: 1,
    });
    expect(error([...base, '--cluster-signing-cert-file', 'ca.crt'])).toMatchObject({
      flag: '--cluster-signing-key-file',
      message: expect.stringMatching(/give both or neither/),
    });
    expect(error(['--kubeconfig', 'k'])).toEqual({ flag: '--kubeconfig', message: '--kubeconfig is used only with --controllers-only' });
  });
});

describe('logging flags', () => {
  test('-v and --v set the verbosity; --logging-format is text or json', () => {
    expect(config(['-v', '3']).verbosity).toBe(3);
    expect(config(['-v=4']).verbosity).toBe(4);
    expect(config(['--v=2', '--logging-format', 'json'])).toMatchObject({ verbosity: 2, loggingFormat: 'json' });
    expect(error(['--logging-format', 'xml'])).toEqual({
      flag: '--logging-format',
      message: 'invalid argument "xml" for "--logging-format" flag: permitted formats: "json", "text"',
    });
    expect(error(['-v', 'loud']).flag).toBe('--v');
  });
});

describe('duration flags', () => {
  it('parses --etcd-compaction-interval and --watch-cache-window as Go durations', () => {
    const r = parseFlags(['--etcd-compaction-interval=1m30s', '--watch-cache-window', '10m']);
    expect(r.kind === 'config' && [r.config.compactionIntervalMs, r.config.watchCacheWindowMs]).toEqual([90_000, 600_000]);
    const d = parseFlags([]);
    expect(d.kind === 'config' && [d.config.compactionIntervalMs, d.config.watchCacheWindowMs]).toEqual([300_000, 300_000]);
    const off = parseFlags(['--etcd-compaction-interval=0']);
    expect(off.kind === 'config' && off.config.compactionIntervalMs).toBe(0);
  });

  it('parses --watch-cache-max-bytes as bytes with an optional Ki, Mi or Gi suffix; 0 is no bound', () => {
    const of = (v: string) => {
      const r = parseFlags([`--watch-cache-max-bytes=${v}`]);
      return r.kind === 'config' ? r.config.watchCacheMaxBytes : r.kind === 'error' ? r.error : r.kind;
    };
    expect([of('1048576'), of('512Ki'), of('64Mi'), of('2Gi'), of('0')]).toEqual([1_048_576, 524_288, 67_108_864, 2 * 1024 ** 3, 0]);
    expect(of('64MB')).toEqual({
      flag: '--watch-cache-max-bytes',
      message: expect.stringMatching(/^invalid argument "64MB" for "--watch-cache-max-bytes" flag: must be a whole number of bytes/),
    });
    expect(of('-1')).toMatchObject({ flag: '--watch-cache-max-bytes' });
  });

  it('refuses a malformed duration, naming the flag', () => {
    expect(parseFlags(['--etcd-compaction-interval=5 minutes'])).toEqual({
      kind: 'error',
      error: {
        flag: '--etcd-compaction-interval',
        message: 'invalid argument "5 minutes" for "--etcd-compaction-interval" flag: time: invalid duration "5 minutes"',
      },
    });
    expect(parseFlags(['--watch-cache-window=0']).kind).toBe('error');
  });

  it('parses --event-ttl (default 1h0m0s), which must be greater than 0 as upstream checks it', () => {
    const d = parseFlags([]);
    expect(d.kind === 'config' && d.config.eventTtlMs).toBe(3_600_000);
    const r = parseFlags(['--event-ttl=30m']);
    expect(r.kind === 'config' && r.config.eventTtlMs).toBe(1_800_000);
    expect(parseFlags(['--event-ttl=0s'])).toEqual({
      kind: 'error',
      error: { flag: '--event-ttl', message: 'invalid argument "0s" for "--event-ttl" flag: must be greater than 0' },
    });
  });
});

describe("the controller manager's timing and eviction flags", () => {
  it('default to upstream 1.32 and take Go durations, int32s and float32s', () => {
    expect(config([])).toMatchObject({
      nodeMonitorPeriodMs: 5_000,
      nodeMonitorGracePeriodMs: 50_000,
      nodeStartupGracePeriodMs: 60_000,
      terminatedPodGcThreshold: 12_500,
    });
    expect(
      config(['--node-eviction-rate=0.5', '--secondary-node-eviction-rate', '0', '--large-cluster-size-threshold=10', '--unhealthy-zone-threshold=.7']),
    ).toMatchObject({
      nodeEvictionRate: 0.5,
      secondaryNodeEvictionRate: 0,
      largeClusterSizeThreshold: 10,
      unhealthyZoneThreshold: 0.7,
    });
    expect(
      config(['--node-monitor-period=1s', '--node-monitor-grace-period', '8s', '--node-startup-grace-period=1m30s', '--terminated-pod-gc-threshold=-1']),
    ).toMatchObject({
      nodeMonitorPeriodMs: 1_000,
      nodeMonitorGracePeriodMs: 8_000,
      nodeStartupGracePeriodMs: 90_000,
      terminatedPodGcThreshold: -1,
    });
  });

  it.each([
    [['--node-monitor-grace-period=0s'], '--node-monitor-grace-period', 'invalid argument "0s" for "--node-monitor-grace-period" flag: must be greater than 0'],
    [
      ['--node-startup-grace-period', 'soon'],
      '--node-startup-grace-period',
      'invalid argument "soon" for "--node-startup-grace-period" flag: time: invalid duration "soon"',
    ],
    [['--node-monitor-period=0'], '--node-monitor-period', 'invalid argument "0" for "--node-monitor-period" flag: must be greater than 0'],
    [
      ['--terminated-pod-gc-threshold=lots'],
      '--terminated-pod-gc-threshold',
      'invalid argument "lots" for "--terminated-pod-gc-threshold" flag: strconv.ParseInt: parsing "lots": invalid syntax',
    ],
    [
      ['--terminated-pod-gc-threshold=3000000000'],
      '--terminated-pod-gc-threshold',
      'invalid argument "3000000000" for "--terminated-pod-gc-threshold" flag: strconv.ParseInt: parsing "3000000000": value out of range',
    ],
    [
      ['--node-eviction-rate=fast'],
      '--node-eviction-rate',
      'invalid argument "fast" for "--node-eviction-rate" flag: strconv.ParseFloat: parsing "fast": invalid syntax',
    ],
    [
      ['--unhealthy-zone-threshold', '1e40'],
      '--unhealthy-zone-threshold',
      'invalid argument "1e40" for "--unhealthy-zone-threshold" flag: strconv.ParseFloat: parsing "1e40": value out of range',
    ],
    [
      ['--large-cluster-size-threshold=big'],
      '--large-cluster-size-threshold',
      'invalid argument "big" for "--large-cluster-size-threshold" flag: strconv.ParseInt: parsing "big": invalid syntax',
    ],
  ])('refuses %j, naming %s', (args, flag, message) => {
    expect(error(args)).toEqual({ flag, message });
  });
});

describe('the audit webhook flags', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keelson-audit-flags-'));
  const kubeconfig = path.join(dir, 'webhook.kubeconfig');
  writeFileSync(
    kubeconfig,
    'apiVersion: v1\nkind: Config\nclusters:\n- name: a\n  cluster: {server: "https://127.0.0.1:9443/audit"}\ncontexts:\n- name: a\n  context: {cluster: a, user: ""}\ncurrent-context: a\n',
  );
  const webhook = ['--vendor', 'kubernetes', '--audit-webhook-config-file', kubeconfig];

  it('default to upstream 1.32 (the other defaults are in the first test); the version follows the naming profile', () => {
    expect(config(webhook).auditWebhookVersion).toBe('audit.k8s.io/v1');
    expect(config(['--vendor', 'platform', '--audit-webhook-config-file', kubeconfig]).auditWebhookVersion).toBe('audit.platform.io/v1');
    // Batch settings are not checked in the blocking modes, as upstream's.
    expect(config([...webhook, '--audit-webhook-mode=blocking-strict', '--audit-webhook-batch-max-size=0']).auditWebhookMode).toBe('blocking-strict');
    // Nothing is checked without the webhook.
    expect(config(['--audit-webhook-mode=sometimes']).auditWebhookMode).toBe('sometimes');
  });

  it.each([
    [['--audit-webhook-mode=sometimes'], '--audit-webhook-mode', 'invalid audit webhook mode sometimes, allowed modes are "batch,blocking,blocking-strict"'],
    [['--audit-webhook-batch-buffer-size=0'], '--audit-webhook-batch-buffer-size', 'invalid audit batch webhook buffer size 0, must be a positive number'],
    [['--audit-webhook-batch-max-size=-1'], '--audit-webhook-batch-max-size', 'invalid audit batch webhook max batch size -1, must be a positive number'],
    [['--audit-webhook-batch-throttle-qps=0'], '--audit-webhook-batch-throttle-qps', 'invalid audit batch webhook throttle QPS 0, must be a positive number'],
    [
      ['--audit-webhook-batch-throttle-burst=0'],
      '--audit-webhook-batch-throttle-burst',
      'invalid audit batch webhook throttle burst 0, must be a positive number',
    ],
    [
      ['--audit-webhook-truncate-max-event-size=0'],
      '--audit-webhook-truncate-max-event-size',
      'invalid audit truncate webhook max event size 0, must be a positive number',
    ],
    [
      ['--audit-webhook-truncate-max-batch-size=10'],
      '--audit-webhook-truncate-max-batch-size',
      'invalid audit truncate webhook max batch size 10, must be greater than max event size (102400)',
    ],
    [['--audit-webhook-version=audit.k8s.io/v1beta1'], '--audit-webhook-version', 'invalid group version, allowed versions are ["audit.k8s.io/v1"]'],
    [
      ['--audit-webhook-batch-max-size=many'],
      '--audit-webhook-batch-max-size',
      'invalid argument "many" for "--audit-webhook-batch-max-size" flag: strconv.ParseInt: parsing "many": invalid syntax',
    ],
    [
      ['--audit-webhook-batch-throttle-enable=maybe'],
      '--audit-webhook-batch-throttle-enable',
      'invalid argument "maybe" for "--audit-webhook-batch-throttle-enable" flag: strconv.ParseBool: parsing "maybe": invalid syntax',
    ],
  ])('refuses %j, naming %s', (args, flag, message) => {
    expect(error([...webhook, ...args])).toEqual({ flag, message });
  });

  it('throttling off leaves its rate unchecked; the kubeconfig must name a server', () => {
    expect(config([...webhook, '--audit-webhook-batch-throttle-enable=false', '--audit-webhook-batch-throttle-qps=0']).auditWebhookBatchThrottleEnable).toBe(
      false,
    );
    const empty = path.join(dir, 'empty.kubeconfig');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\n');
    expect(error(['--audit-webhook-config-file', empty])).toEqual({ flag: '--audit-webhook-config-file', message: `${empty}: no cluster with a server` });
  });
});

describe('the audit log flags', () => {
  const logged = ['--vendor', 'kubernetes', '--audit-log-path', '/tmp/audit.log'];

  it('default to upstream 1.32: blocking, json, one event per write', () => {
    expect(
      config([
        ...logged,
        '--audit-log-format=legacy',
        '--audit-log-compress',
        '--audit-log-mode=batch',
        '--audit-log-batch-max-size=100',
        '--audit-log-batch-max-wait=5s',
      ]),
    ).toMatchObject({
      auditLogFormat: 'legacy',
      auditLogCompress: true,
      auditLogMode: 'batch',
      auditLogBatchMaxSize: 100,
      auditLogBatchMaxWaitMs: 5_000,
      auditLogVersion: 'audit.k8s.io/v1',
    });
    // Nothing is checked without the log.
    expect(config(['--audit-log-format=xml', '--audit-log-maxage=-1']).auditLogFormat).toBe('xml');
  });

  it.each([
    [['--audit-log-format=xml'], '--audit-log-format', 'invalid audit log format xml, allowed formats are "legacy,json"'],
    [['--audit-log-mode=later'], '--audit-log-mode', 'invalid audit log mode later, allowed modes are "batch,blocking,blocking-strict"'],
    [
      ['--audit-log-mode=batch', '--audit-log-batch-throttle-enable', '--audit-log-batch-throttle-qps=0'],
      '--audit-log-batch-throttle-qps',
      'invalid audit batch log throttle QPS 0, must be a positive number',
    ],
    [['--audit-log-maxage=-1'], '--audit-log-maxage', "--audit-log-maxage -1 can't be a negative number"],
    [['--audit-log-maxbackup=-2'], '--audit-log-maxbackup', "--audit-log-maxbackup -2 can't be a negative number"],
    [['--audit-log-maxsize=-3'], '--audit-log-maxsize', "--audit-log-maxsize -3 can't be a negative number"],
    [['--audit-log-version=audit.k8s.io/v1alpha1'], '--audit-log-version', 'invalid group version, allowed versions are ["audit.k8s.io/v1"]'],
    [
      ['--audit-log-truncate-max-event-size=-1'],
      '--audit-log-truncate-max-event-size',
      'invalid audit truncate log max event size -1, must be a positive number',
    ],
  ])('refuses %j, naming %s', (args, flag, message) => {
    expect(error([...logged, ...args])).toEqual({ flag, message });
  });
});

describe('docs/FLAGS.md', () => {
  it('is what tools/flags-doc.ts writes from the flag table (run it after changing a flag)', () => {
    expect(readFileSync(FLAGS_DOC_PATH, 'utf8')).toBe(flagsMarkdown());
  });

  it('lists every flag the server takes, with its default', () => {
    const doc = readFileSync(FLAGS_DOC_PATH, 'utf8');
    expect(flagNames().filter((name) => !doc.includes(`\`--${name}\``))).toEqual([]);
    expect(doc).toMatch(/^\| `--watch-cache-max-bytes` int \| `32Mi` \| /m);
    expect(doc).toMatch(/^\| `--oidc-required-claim` mapStringString \| /m);
  });

  it('is where the README sends readers for flags, and the README keeps the two commands', () => {
    const readme = readFileSync(path.join(__dirname, '../../README.md'), 'utf8');
    expect(readme).toContain('docs/FLAGS.md');
    expect(readme).toContain('\nnpm install && npm start\n');
    expect(readme).toContain('\nnpm install && npm test\n');
  });
});

describe('authorization flags', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'keelson-authz-flags-'));
  const good = path.join(dir, 'policy.jsonl');
  const bad = path.join(dir, 'bad.jsonl');
  writeFileSync(
    good,
    '{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*"}}\n',
  );
  writeFileSync(bad, '# a comment\n{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy"\n');

  test('modes are checked, ABAC needs its policy file and the file needs ABAC', () => {
    expect(config(['--vendor', 'kubernetes', '--authorization-mode', 'Node,ABAC,RBAC', '--authorization-policy-file', good]).authorizationModes).toEqual([
      'Node',
      'ABAC',
      'RBAC',
    ]);
    expect(error(['--authorization-mode', 'ABAC'])).toEqual({
      flag: '--authorization-policy-file',
      message: "authorization-mode ABAC's authorization policy file not passed",
    });
    expect(error(['--authorization-policy-file', good])).toEqual({
      flag: '--authorization-policy-file',
      message: 'cannot specify --authorization-policy-file without mode ABAC',
    });
    expect(error(['--authorization-mode', 'RBAC,Magic']).message).toContain('authorization mode "Magic" is not supported');
    expect(error(['--authorization-mode', 'RBAC,RBAC']).message).toContain('may not be repeated');
  });

  test('a bad policy file refuses to start, naming the line', () => {
    const e = error(['--vendor', 'kubernetes', '--authorization-mode', 'ABAC', '--authorization-policy-file', bad]);
    expect(e.flag).toBe('--authorization-policy-file');
    expect(e.message).toContain(`${bad}, line 2`);
  });
});
