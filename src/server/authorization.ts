/**
 * The server's authorizer chain: the `system:masters` rule first, then the authorizers of
 * `--authorization-mode` (with the `--authorization-webhook-*` and `--authorization-policy-file`
 * settings) or, instead, of `--authorization-config`, in their order. RBAC and Node index what
 * they need through watches once the core is ready (until then RBAC lets upstream's bootstrap
 * discovery and public-info grants stand in). The configuration file is reloaded when it changes
 * and every minute; a file that no longer validates is logged and the last good chain kept.
 */
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import {
  type Authorizer,
  type NodeAuthorizer,
  type RbacAuthorizer,
  abacAuthorizer,
  bootstrapPolicy,
  nodeAuthorizer,
  rbacAuthorizer,
  readAbacPolicyFile,
} from '../authz';
import { type AuthorizerConfig, parseAuthorizationConfig } from '../authz/config';
import { rulesOfObject } from '../authz/rules';
import { webhookAuthorizer } from '../authz/webhook';
import { readWebhookConfig } from '../authn/webhook';
import type { CoreApi, RequestContext } from '../core';
import type { FeatureGates } from '../features';
import { bootstrapPolicyAuthorizer, superuserAuthorizer } from '../gateway/steps/authorization';
import { createNaming } from '../naming';
import { systemClock, type Clock } from '../clock';
import type { ServerConfig } from './flags';

const RELOAD_INTERVAL_MS = 60_000;
/** The legacy Webhook mode has no timeout flag; upstream's client gives up after 30 s. */
const LEGACY_WEBHOOK_TIMEOUT_MS = 30_000;

/** What reloading the configuration file has done, for the log and for tests. */
export interface AuthorizationReloadStatus {
  /** Successful loads that changed the chain (the first load counts). */
  successes: number;
  failures: number;
  lastError?: string;
  lastSuccessMs?: number;
}

export interface ServerAuthorization {
  /** The chain; the same array the doors hold, replaced in place on a reload. */
  authorizers: Authorizer[];
  rbac(): RbacAuthorizer | undefined;
  reload: AuthorizationReloadStatus;
  /** Read the configuration file again now (also done on change and every minute). */
  reloadNow(): void;
  start(): Promise<void>;
  stop(): void;
}

const EMPTY_RULES = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };

export function buildAuthorizers(
  config: ServerConfig,
  core: CoreApi,
  features: FeatureGates,
  serverContext: RequestContext,
  log: (message: string) => void,
  clock: Clock = systemClock,
  /** Called after each reload of a changed configuration file (not the first load), for the reload metrics. */
  onReload?: (status: 'success' | 'failure', atMs: number) => void,
): ServerAuthorization {
  const naming = createNaming(config.vendor);
  let rbac: RbacAuthorizer | undefined;
  let node: NodeAuthorizer | undefined;
  let started = false;
  /** The types in the current chain (RBAC and Node need their indexes). */
  let types = new Set<string>();

  const early = bootstrapPolicyAuthorizer(naming);
  const rbacEntry = (name: string): Authorizer => ({
    name,
    authorize: (a) => rbac?.authorize(a) ?? early.authorize(a),
    rulesFor: (user, namespace) => rbac?.rulesFor(user, namespace) ?? { ...EMPTY_RULES, incomplete: true },
  });
  const nodeEntry = (name: string): Authorizer => ({
    name,
    authorize: (a) => node?.authorize(a) ?? { decision: 'noOpinion', reason: 'the node graph is still loading' },
    rulesFor: (user, namespace) => node?.rulesFor?.(user, namespace) ?? EMPTY_RULES,
  });
  const fixed = (type: string, name: string): Authorizer => {
    switch (type) {
      case 'AlwaysAllow':
        return {
          name,
          authorize: () => ({ decision: 'allow' }),
          rulesFor: () => ({
            resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
            nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
            incomplete: false,
            errors: [],
          }),
        };
      case 'AlwaysDeny':
        return { name, authorize: () => ({ decision: 'deny', reason: 'Everything is forbidden.' }), rulesFor: () => EMPTY_RULES };
      case 'RBAC':
        return rbacEntry(name);
      case 'Node':
        return nodeEntry(name);
      case 'ABAC':
        return { ...abacAuthorizer(readAbacPolicyFile(config.authorizationPolicyFile!, naming)), name };
    }
    throw new Error(`unknown authorizer type ${type}`);
  };

  const fromConfig = (entries: readonly AuthorizerConfig[]): Authorizer[] =>
    entries.map((entry) => {
      if (entry.type !== 'Webhook') return fixed(entry.type, entry.name);
      const w = entry.webhook!;
      return webhookAuthorizer({
        name: entry.name,
        client: w.client,
        apiVersion: `${naming.groups.authorization}/${w.subjectAccessReviewVersion}`,
        authorizedTtlMs: w.authorizedTtlMs,
        unauthorizedTtlMs: w.unauthorizedTtlMs,
        cacheAuthorized: w.cacheAuthorized,
        cacheUnauthorized: w.cacheUnauthorized,
        timeoutMs: w.timeoutMs,
        failurePolicy: w.failurePolicy,
        matchConditions: w.matchConditions,
        clock,
      });
    });

  const fromFlags = (): Authorizer[] =>
    config.authorizationModes.map((mode) => {
      if (mode !== 'Webhook') return fixed(mode, mode);
      return webhookAuthorizer({
        name: 'Webhook',
        client: readWebhookConfig(config.authorizationWebhookConfigFile!),
        apiVersion: `${naming.groups.authorization}/${config.authorizationWebhookVersion}`,
        authorizedTtlMs: config.authorizationWebhookCacheAuthorizedTtlMs,
        unauthorizedTtlMs: config.authorizationWebhookCacheUnauthorizedTtlMs,
        timeoutMs: LEGACY_WEBHOOK_TIMEOUT_MS,
        failurePolicy: 'NoOpinion',
        clock,
      });
    });

  const reload: AuthorizationReloadStatus = { successes: 0, failures: 0 };
  let lastText: string | undefined;
  const file = config.authorizationConfigFile;
  const load = (): Authorizer[] | undefined => {
    if (!file) {
      types = new Set(config.authorizationModes);
      return fromFlags();
    }
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      reload.failures++;
      reload.lastError = (err as Error).message;
      log(`--authorization-config: cannot read ${file}, keeping the last good configuration: ${reload.lastError}`);
      if (lastText !== undefined) onReload?.('failure', clock.now());
      return undefined;
    }
    if (text === lastText) return undefined;
    try {
      const entries = parseAuthorizationConfig(text, naming).authorizers;
      const chain = fromConfig(entries);
      types = new Set(entries.map((e) => e.type));
      if (lastText !== undefined) onReload?.('success', clock.now());
      lastText = text;
      reload.successes++;
      reload.lastSuccessMs = clock.now();
      delete reload.lastError;
      return chain;
    } catch (err) {
      if (lastText !== undefined) onReload?.('failure', clock.now());
      lastText = text;
      reload.failures++;
      reload.lastError = (err as Error).message;
      log(`--authorization-config: ${file} is not valid, keeping the last good configuration: ${reload.lastError}`);
      return undefined;
    }
  };

  const authorizers: Authorizer[] = [superuserAuthorizer, ...(load() ?? [])];
  const ensureIndexes = async () => {
    if (!started) return;
    const tasks: Promise<unknown>[] = [];
    if (types.has('Node') && !node) {
      const withSelectors = features.enabled('AuthorizeNodeWithSelectors') && features.enabled('AuthorizeWithSelectors');
      // The rules every node holds beyond its graph are the system:node role's, as upstream's NodeRules.
      const nodeRules = rulesOfObject(bootstrapPolicy(naming).clusterRoles.find((r) => r.metadata?.name === 'system:node'));
      node = nodeAuthorizer({ api: core, naming, ctx: serverContext, clock, nodeRules, withSelectors });
      tasks.push(node.synced().catch((err: unknown) => log(`the node authorizer's graph failed to load: ${(err as Error).message}`)));
    }
    if (types.has('RBAC') && !rbac) {
      rbac = rbacAuthorizer({ api: core, naming, ctx: serverContext, clock });
      tasks.push(rbac.synced().catch((err: unknown) => log(`RBAC index failed to load: ${(err as Error).message}`)));
    }
    await Promise.all(tasks);
  };
  const reloadNow = () => {
    const chain = load();
    if (!chain) return;
    authorizers.splice(1, authorizers.length - 1, ...chain);
    log(`--authorization-config: loaded ${file} (${chain.map((a) => a.name).join(', ')})`);
    void ensureIndexes();
  };

  let watcher: FSWatcher | undefined;
  let cancelTimer: (() => void) | undefined;
  const schedule = () => {
    cancelTimer = clock.setTimeout(() => {
      reloadNow();
      schedule();
    }, RELOAD_INTERVAL_MS);
  };
  return {
    authorizers,
    rbac: () => rbac,
    reload,
    reloadNow,
    async start() {
      started = true;
      await ensureIndexes();
      if (file) {
        try {
          watcher = watch(file, () => reloadNow()).on('error', () => {});
        } catch {
          // Reloads still happen every minute.
        }
        schedule();
      }
    },
    stop: () => {
      watcher?.close();
      cancelTimer?.();
      rbac?.stop();
      node?.stop();
    },
  };
}
