/**
 * Structured authentication configuration (`--authentication-config`): an
 * `AuthenticationConfiguration` of `apiserver.config.<vendor>/v1beta1` (or `v1`) whose `jwt`
 * list (at most 64) each names an issuer — its URL (https, unique, not the service-account
 * issuer), an optional discovery URL, a CA, the accepted audiences — and how claims become a
 * user: `claimMappings` for username, groups, uid and extra (a claim with a prefix, or a CEL
 * expression over `claims`), `claimValidationRules` (a required claim value, or a CEL boolean
 * with a message) and `userValidationRules` (CEL over `user`). Expressions are compiled when the
 * file is loaded; every mistake is reported naming its field, in upstream's field-error words.
 * The file is read again when it changes: a valid edit takes effect without a restart, a bad
 * one is logged and the last good configuration stays.
 */
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { celCompileError, type CompiledExpression, compileExpression, type UserInfo } from '../core';
import type { Naming } from '../naming';
import type { Clock } from '../clock';
import { oidcAuthenticator, type OidcAuthenticator } from './oidc';
import { type AuthenticationResult, NO_OPINION, type TokenAuthenticator, rejected } from './types';

const MAX_JWT_AUTHENTICATORS = 64;

type Evaluate = (vars: Record<string, unknown>) => unknown;

interface Mapping {
  claim?: string;
  prefix?: string;
  expression?: Evaluate;
}

export interface JwtIssuerConfig {
  url: string;
  discoveryUrl?: string;
  ca?: string;
  audiences: string[];
  claimRules: Array<{ claim: string; requiredValue: string } | { expression: Evaluate; message: string }>;
  username: Mapping;
  groups?: Mapping;
  uid?: Mapping;
  extra: Array<{ key: string; value: Evaluate }>;
  userRules: Array<{ expression: Evaluate; message: string }>;
}

export interface AuthenticationConfig {
  jwt: JwtIssuerConfig[];
  anonymous?: { enabled: boolean; paths: string[] };
}

/** A configuration with mistakes: every one of them, in upstream's field-error words. */
export class AuthenticationConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join(', '));
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Compile a configuration's CEL expression over `variables` (`claims`, `user`, `request`): a
 * syntax error, a variable not among them or a function the environment does not have is the
 * field's error, as upstream's compiler reports it when the file is loaded.
 */
export function compileCel(
  expression: unknown,
  field: string,
  errors: string[],
  naming: Pick<Naming, 'word'>,
  variables: readonly string[],
): Evaluate | undefined {
  if (typeof expression !== 'string' || expression === '') {
    errors.push(`${field}: Required value`);
    return undefined;
  }
  let compiled: CompiledExpression;
  try {
    compiled = compileExpression(expression, naming);
  } catch (err) {
    errors.push(`${field}: Invalid value: ${JSON.stringify(expression)}: compilation failed: ${(err as Error).message}`);
    return undefined;
  }
  const problem = celCompileError(expression, { variables });
  if (problem !== undefined) {
    errors.push(`${field}: Invalid value: ${JSON.stringify(expression)}: ${problem}`);
    return undefined;
  }
  // Results as plain values (strings, lists of strings, booleans); a failure throws.
  return (vars) => compiled.evaluate(vars);
}

function mapping(raw: unknown, field: string, errors: string[], options: { prefixRequired: boolean; required: boolean; naming: Naming }): Mapping | undefined {
  if (raw === undefined || raw === null) {
    if (options.required) errors.push(`${field}: Required value: claim or expression is required`);
    return undefined;
  }
  if (!isObj(raw)) {
    errors.push(`${field}: Invalid value: must be an object`);
    return undefined;
  }
  const hasClaim = typeof raw.claim === 'string' && raw.claim !== '';
  const hasExpression = typeof raw.expression === 'string' && raw.expression !== '';
  if (hasClaim && hasExpression) errors.push(`${field}: Invalid value: "": claim and expression can't both be set`);
  if (!hasClaim && !hasExpression) {
    if (options.required) errors.push(`${field}: Required value: claim or expression is required`);
    return undefined;
  }
  if (hasExpression) {
    if (raw.prefix !== undefined) errors.push(`${field}.prefix: Invalid value: ${JSON.stringify(raw.prefix)}: may not be specified when expression is set`);
    const expression = compileCel(raw.expression, `${field}.expression`, errors, options.naming, ['claims']);
    return expression ? { expression } : undefined;
  }
  if (options.prefixRequired && typeof raw.prefix !== 'string') {
    errors.push(`${field}.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`);
  }
  return { claim: raw.claim as string, prefix: typeof raw.prefix === 'string' ? raw.prefix : '' };
}

/** Parse and check a configuration file's text; throws AuthenticationConfigError listing every mistake. */
export function parseAuthenticationConfig(text: string, naming: Naming, serviceAccountIssuers: readonly string[]): AuthenticationConfig {
  const errors: string[] = [];
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new AuthenticationConfigError([`failed to decode the configuration: ${(err as Error).message}`]);
  }
  if (!isObj(doc)) throw new AuthenticationConfigError(['the configuration must be an object']);
  const group = naming.groups.apiserverConfig;
  if (doc.apiVersion !== `${group}/v1beta1` && doc.apiVersion !== `${group}/v1`)
    errors.push(`apiVersion: Unsupported value: ${JSON.stringify(doc.apiVersion)}: supported values: "${group}/v1beta1", "${group}/v1"`);
  if (doc.kind !== 'AuthenticationConfiguration')
    errors.push(`kind: Unsupported value: ${JSON.stringify(doc.kind)}: supported values: "AuthenticationConfiguration"`);
  const jwtList = doc.jwt === undefined || doc.jwt === null ? [] : doc.jwt;
  if (!Array.isArray(jwtList)) throw new AuthenticationConfigError([...errors, 'jwt: Invalid value: must be a list']);
  if (jwtList.length > MAX_JWT_AUTHENTICATORS) errors.push(`jwt: Too many: ${jwtList.length}: must have at most ${MAX_JWT_AUTHENTICATORS} items`);
  const urls = new Set<string>();
  const discoveryUrls = new Set<string>();
  const jwt: JwtIssuerConfig[] = [];
  jwtList.forEach((raw: unknown, i: number) => {
    const at = `jwt[${i}]`;
    if (!isObj(raw)) return void errors.push(`${at}: Invalid value: must be an object`);
    const issuer = isObj(raw.issuer) ? raw.issuer : {};
    const url = typeof issuer.url === 'string' ? issuer.url : '';
    if (!url) errors.push(`${at}.issuer.url: Required value`);
    else if (!url.startsWith('https://')) errors.push(`${at}.issuer.url: Invalid value: ${JSON.stringify(url)}: URL scheme must be https`);
    else if (urls.has(url)) errors.push(`${at}.issuer.url: Duplicate value: ${JSON.stringify(url)}`);
    else if (serviceAccountIssuers.includes(url))
      errors.push(
        `${at}.issuer.url: Invalid value: ${JSON.stringify(url)}: URL must not overlap with disallowed issuers: [${serviceAccountIssuers.join(' ')}]`,
      );
    urls.add(url);
    const discoveryUrl = typeof issuer.discoveryURL === 'string' && issuer.discoveryURL ? issuer.discoveryURL : undefined;
    if (discoveryUrl) {
      if (!discoveryUrl.startsWith('https://'))
        errors.push(`${at}.issuer.discoveryURL: Invalid value: ${JSON.stringify(discoveryUrl)}: URL scheme must be https`);
      if (discoveryUrl === url)
        errors.push(`${at}.issuer.discoveryURL: Invalid value: ${JSON.stringify(discoveryUrl)}: discoveryURL must be different from URL`);
      if (discoveryUrls.has(discoveryUrl)) errors.push(`${at}.issuer.discoveryURL: Duplicate value: ${JSON.stringify(discoveryUrl)}`);
      discoveryUrls.add(discoveryUrl);
    }
    const audiences = Array.isArray(issuer.audiences) ? issuer.audiences.filter((a): a is string => typeof a === 'string' && a !== '') : [];
    if (audiences.length === 0) errors.push(`${at}.issuer.audiences: Required value: at least one ${at}.issuer.audiences is required`);
    if (audiences.length > 1 && issuer.audienceMatchPolicy !== 'MatchAny') {
      errors.push(
        `${at}.issuer.audienceMatchPolicy: Invalid value: ${JSON.stringify(issuer.audienceMatchPolicy ?? '')}: audienceMatchPolicy must be MatchAny for multiple audiences`,
      );
    }
    const claimRules: JwtIssuerConfig['claimRules'] = [];
    (Array.isArray(raw.claimValidationRules) ? raw.claimValidationRules : []).forEach((rule: unknown, j: number) => {
      const f = `${at}.claimValidationRules[${j}]`;
      if (!isObj(rule)) return void errors.push(`${f}: Invalid value: must be an object`);
      if (typeof rule.claim === 'string' && rule.claim) {
        if (rule.expression !== undefined) errors.push(`${f}: Invalid value: "": claim and expression can't both be set`);
        claimRules.push({ claim: rule.claim, requiredValue: typeof rule.requiredValue === 'string' ? rule.requiredValue : '' });
      } else {
        const expression = compileCel(rule.expression, `${f}.expression`, errors, naming, ['claims']);
        if (expression) claimRules.push({ expression, message: typeof rule.message === 'string' ? rule.message : '' });
      }
    });
    const mappings = isObj(raw.claimMappings) ? raw.claimMappings : {};
    const username = mapping(mappings.username, `${at}.claimMappings.username`, errors, { prefixRequired: true, required: true, naming });
    const groups = mapping(mappings.groups, `${at}.claimMappings.groups`, errors, { prefixRequired: true, required: false, naming });
    const uid = mapping(mappings.uid, `${at}.claimMappings.uid`, errors, { prefixRequired: false, required: false, naming });
    // Upstream refuses an unverified email as user name: claims.email needs claims.email_verified checked.
    const texts = JSON.stringify([raw.claimMappings, raw.claimValidationRules]);
    if (
      isObj(mappings.username) &&
      typeof mappings.username.expression === 'string' &&
      /claims\.email\b(?!_)/.test(mappings.username.expression) &&
      !texts.includes('claims.email_verified')
    ) {
      errors.push(
        `${at}.claimMappings.username.expression: Invalid value: ${JSON.stringify(mappings.username.expression)}: claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression`,
      );
    }
    const extra: JwtIssuerConfig['extra'] = [];
    const keys = new Set<string>();
    (Array.isArray(mappings.extra) ? mappings.extra : []).forEach((e: unknown, j: number) => {
      const f = `${at}.claimMappings.extra[${j}]`;
      if (!isObj(e)) return void errors.push(`${f}: Invalid value: must be an object`);
      const key = typeof e.key === 'string' ? e.key : '';
      if (!key) errors.push(`${f}.key: Required value`);
      else if (key !== key.toLowerCase()) errors.push(`${f}.key: Invalid value: ${JSON.stringify(key)}: key must be lowercase`);
      else if (!/^[a-z0-9.-]+\.[a-z]+\/\S+$/.test(key))
        errors.push(`${f}.key: Invalid value: ${JSON.stringify(key)}: must be a domain-prefixed path (such as "acme.io/foo")`);
      else if ([naming.keyDomain, naming.groupDomain].some((d) => key.split('/')[0] === d || key.split('/')[0]!.endsWith(`.${d}`))) {
        errors.push(`${f}.key: Invalid value: ${JSON.stringify(key)}: ${naming.keyDomain} and ${naming.groupDomain} domains are reserved`);
      } else if (keys.has(key)) errors.push(`${f}.key: Duplicate value: ${JSON.stringify(key)}`);
      keys.add(key);
      const value = compileCel(e.valueExpression, `${f}.valueExpression`, errors, naming, ['claims']);
      if (key && value) extra.push({ key, value });
    });
    const userRules: JwtIssuerConfig['userRules'] = [];
    (Array.isArray(raw.userValidationRules) ? raw.userValidationRules : []).forEach((rule: unknown, j: number) => {
      const f = `${at}.userValidationRules[${j}]`;
      if (!isObj(rule)) return void errors.push(`${f}: Invalid value: must be an object`);
      const expression = compileCel(rule.expression, `${f}.expression`, errors, naming, ['user']);
      if (expression) userRules.push({ expression, message: typeof rule.message === 'string' ? rule.message : '' });
    });
    const config: JwtIssuerConfig = { url, audiences, claimRules, username: username ?? {}, extra, userRules };
    if (discoveryUrl) config.discoveryUrl = discoveryUrl;
    if (typeof issuer.certificateAuthority === 'string' && issuer.certificateAuthority) config.ca = issuer.certificateAuthority;
    if (groups) config.groups = groups;
    if (uid) config.uid = uid;
    jwt.push(config);
  });
  let anonymous: AuthenticationConfig['anonymous'];
  if (isObj(doc.anonymous)) {
    const conditions = Array.isArray(doc.anonymous.conditions) ? doc.anonymous.conditions : [];
    anonymous = {
      enabled: doc.anonymous.enabled === true,
      paths: conditions.map((c: unknown) => (isObj(c) && typeof c.path === 'string' ? c.path : '')).filter(Boolean),
    };
    if (!anonymous.enabled && conditions.length > 0)
      errors.push('anonymous.conditions: Invalid value: "": enabled should be set to true when conditions are defined');
  }
  if (errors.length > 0) throw new AuthenticationConfigError(errors);
  return { jwt, ...(anonymous ? { anonymous } : {}) };
}

function mapped(m: Mapping, claims: Record<string, unknown>): unknown {
  if (m.expression) return m.expression({ claims });
  const value = claims[m.claim ?? ''];
  return value;
}

/** Claims → user, as one `jwt[]` entry says. */
function userFromClaims(config: JwtIssuerConfig, claims: Record<string, unknown>): AuthenticationResult {
  try {
    for (const rule of config.claimRules) {
      if ('claim' in rule) {
        if (claims[rule.claim] !== rule.requiredValue) return rejected(`jwt: claim ${rule.claim} does not have the required value`);
      } else if (rule.expression({ claims }) !== true) return rejected(`jwt: ${rule.message || 'claim validation rule failed'}`);
    }
    const name = mapped(config.username, claims);
    if (typeof name !== 'string' || name === '') return rejected('jwt: username is empty');
    const user: UserInfo = { username: (config.username.expression ? '' : (config.username.prefix ?? '')) + name, groups: [] };
    if (config.groups) {
      const g = mapped(config.groups, claims);
      const list = typeof g === 'string' ? [g] : Array.isArray(g) ? g : g === undefined || g === null ? [] : undefined;
      if (!list?.every((x) => typeof x === 'string')) return rejected('jwt: groups must be a string or a list of strings');
      user.groups = (list as string[]).map((x) => (config.groups!.expression ? '' : (config.groups!.prefix ?? '')) + x);
    }
    if (config.uid) {
      const u = mapped(config.uid, claims);
      if (typeof u === 'string' && u) user.uid = u;
    }
    for (const e of config.extra) {
      const v = e.value({ claims });
      const values = typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
      if (values.length) (user.extra ??= {})[e.key] = values;
    }
    for (const rule of config.userRules) {
      const view = { username: user.username, uid: user.uid ?? '', groups: user.groups, extra: user.extra ?? {} };
      if (rule.expression({ user: view }) !== true) return rejected(`jwt: ${rule.message || 'user validation rule failed'}`);
    }
    return { outcome: 'authenticated', user };
  } catch (err) {
    return rejected(`jwt: ${(err as Error).message}`);
  }
}

export interface StructuredAuthenticationOptions {
  file: string;
  naming: Naming;
  clock: Clock;
  serviceAccountIssuers: readonly string[];
  /** How often the file is checked for changes. */
  reloadIntervalMs?: number;
  log?: (message: string) => void;
  /** Called after each reload of a changed file (or a failed read), for the reload metrics. */
  onReload?: (status: ReloadStatus) => void;
}

/** What the reload controller last did (upstream's reload metrics): when, and whether it took. */
export interface ReloadStatus {
  lastTimestampSeconds: number;
  status: 'success' | 'failure';
  /** Hash of the configuration in effect. */
  hash: string;
}

export interface StructuredAuthenticator extends TokenAuthenticator {
  readonly config: () => AuthenticationConfig;
  readonly reloadStatus: () => ReloadStatus;
  /** Check the file now (the timer does it every interval). */
  reload(): Promise<void>;
  ready(): Promise<void>;
  close(): void;
}

/** Load the file (throws AuthenticationConfigError at start), and follow its changes. */
export function structuredAuthenticator(options: StructuredAuthenticationOptions): StructuredAuthenticator {
  const log = options.log ?? (() => {});
  const read = () => readFileSync(options.file, 'utf8');
  const hashOf = (text: string) => createHash('sha256').update(text).digest('hex');
  let text = read();
  let config = parseAuthenticationConfig(text, options.naming, options.serviceAccountIssuers);
  let issuers: OidcAuthenticator[] = [];
  const build = (c: AuthenticationConfig) =>
    c.jwt.map((j) =>
      oidcAuthenticator({
        issuerUrl: j.url,
        clientId: j.audiences[0]!,
        audiences: j.audiences,
        ...(j.discoveryUrl ? { discoveryUrl: j.discoveryUrl } : {}),
        ...(j.ca ? { ca: j.ca } : {}),
        usernameClaim: 'sub',
        requiredClaims: {},
        signingAlgs: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'],
        clock: options.clock,
        log,
        mapClaims: (claims) => userFromClaims(j, claims),
      }),
    );
  issuers = build(config);
  let status: ReloadStatus = { lastTimestampSeconds: Math.floor(options.clock.now() / 1000), status: 'success', hash: hashOf(text) };
  let stopped = false;
  let cancel: (() => void) | undefined;

  async function reload(): Promise<void> {
    let next: string;
    try {
      next = read();
    } catch (err) {
      log(`authentication config: reading ${options.file} failed: ${(err as Error).message}`);
      status = { ...status, lastTimestampSeconds: Math.floor(options.clock.now() / 1000), status: 'failure' };
      options.onReload?.(status);
      return;
    }
    if (next === text) return;
    try {
      const parsed = parseAuthenticationConfig(next, options.naming, options.serviceAccountIssuers);
      const built = build(parsed);
      await Promise.all(built.map((b) => b.ready()));
      for (const old of issuers) old.close();
      issuers = built;
      config = parsed;
      text = next;
      status = { lastTimestampSeconds: Math.floor(options.clock.now() / 1000), status: 'success', hash: hashOf(next) };
      log(`authentication config: reloaded ${options.file}`);
      options.onReload?.(status);
    } catch (err) {
      // A bad edit: keep the last good configuration, say why.
      text = next;
      status = { ...status, lastTimestampSeconds: Math.floor(options.clock.now() / 1000), status: 'failure' };
      log(`authentication config: reload of ${options.file} failed, keeping the last good configuration: ${(err as Error).message}`);
      options.onReload?.(status);
    }
  }

  const schedule = () => {
    if (stopped) return;
    cancel = options.clock.setTimeout(() => void reload().finally(schedule), options.reloadIntervalMs ?? 10_000);
  };
  schedule();

  return {
    name: 'jwt',
    config: () => config,
    reloadStatus: () => status,
    reload,
    ready: () => Promise.all(issuers.map((i) => i.ready())).then(() => undefined),
    close() {
      stopped = true;
      cancel?.();
      for (const i of issuers) i.close();
    },
    async authenticateToken(token: string): Promise<AuthenticationResult> {
      for (const issuer of issuers) {
        const result = await issuer.authenticateToken(token);
        if (result.outcome !== 'noOpinion') return result;
      }
      return NO_OPINION;
    },
  };
}
