/**
 * The ClusterRole aggregation controller, as upstream's: a ClusterRole with an
 * `aggregationRule` gets as its rules the union of the rules of every other ClusterRole its
 * `clusterRoleSelectors` select (selected roles taken in name order, each rule once). Any
 * ClusterRole change re-evaluates every aggregated role, so a role labelled later — or
 * unlabelled, or deleted — is reflected. An ordinary API client of the core.
 */
import { type ApiObject, type RequestContext, followResource, type InformerView, labelSelectorMatches } from '../core';
import { StatusError } from '../status';
import type { ApiControllerOptions } from './options';

type MetaLabelSelector = Parameters<typeof labelSelectorMatches>[0];

export interface ClusterRoleAggregationOptions extends Pick<ApiControllerOptions, 'core' | 'informers' | 'user' | 'clock' | 'log'> {
  rbacGroup: string;
}

/** The rules `role` aggregates from `roles` (undefined when it has no aggregationRule). */
export function aggregatedRules(role: ApiObject, roles: Iterable<ApiObject>): unknown[] | undefined {
  const rule = role.aggregationRule as { clusterRoleSelectors?: unknown } | null | undefined;
  if (!rule || typeof rule !== 'object') return undefined;
  const selectors = Array.isArray(rule.clusterRoleSelectors) ? (rule.clusterRoleSelectors as MetaLabelSelector[]) : [];
  const byName = [...roles].sort((a, b) => ((a.metadata?.name ?? '') < (b.metadata?.name ?? '') ? -1 : 1));
  const rules: unknown[] = [];
  const seen = new Set<string>();
  for (const selector of selectors) {
    for (const other of byName) {
      if (other.metadata?.name === role.metadata?.name || !labelSelectorMatches(selector, other.metadata?.labels)) continue;
      for (const r of Array.isArray(other.rules) ? other.rules : []) {
        const key = canonical(r);
        if (seen.has(key)) continue;
        seen.add(key);
        rules.push(r);
      }
    }
  }
  return rules;
}

/** A rule's JSON with object keys sorted: equal rules, equal keys. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * Do two rule lists grant the same? Compared as sets: roles that select each other (two
 * selecting everything, say) reach the same rules in different orders, and rewriting one to
 * the other's order would only make the other follow, for ever.
 */
export function sameRules(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  const keys = new Set(a.map(canonical));
  return b.every((r) => keys.has(canonical(r)));
}

export class ClusterRoleAggregationController {
  private readonly informer: InformerView;
  private readonly ctx: RequestContext;
  private scheduled = false;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: ClusterRoleAggregationOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/clusterrole-aggregation-controller' };
    this.informer = followResource(options, { group: options.rbacGroup, version: 'v1', resource: 'clusterroles' }, this.ctx, () => this.schedule());
  }

  /** Resolves once the first list was read and acted on. */
  async synced(): Promise<void> {
    await this.informer.synced;
    await this.running;
  }

  stop(): void {
    this.informer.stop();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.running = this.running.then(async () => {
      this.scheduled = false;
      await this.syncAll();
    });
  }

  private async syncAll(): Promise<void> {
    const roles = [...this.informer.objects.values()];
    for (const role of roles) {
      const rules = aggregatedRules(role, roles);
      if (!rules || sameRules(rules, Array.isArray(role.rules) ? role.rules : [])) continue;
      // A write in process can complete without leaving the microtask queue: let requests in between.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const name = role.metadata!.name!;
      try {
        await this.options.core.update({ group: this.options.rbacGroup, version: 'v1', resource: 'clusterroles', name }, { ...role, rules }, {}, this.ctx);
      } catch (err) {
        // A conflict or a deletion brings a watch event, which syncs again.
        if (!StatusError.is(err, 'Conflict') && !StatusError.is(err, 'NotFound')) {
          this.options.log?.(`clusterrole-aggregation: updating ${name}: ${(err as Error).message}`);
        }
      }
    }
  }
}
