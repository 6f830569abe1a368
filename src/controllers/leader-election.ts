/**
 * Leader election through a Lease, as client-go's leaderelection package does it, so several
 * Keelson processes on one etcd run each controller once (`--leader-elect`). A candidate tries
 * every `retryPeriod`: it takes the Lease when there is none, when it is free (released with an
 * empty holder) or when its holder has not renewed it for `leaseDuration` — measured on this
 * candidate's own clock from when it last saw the record change, so clock skew between processes
 * does not matter. The leader renews every `retryPeriod` and steps down when it could not renew
 * for `renewDeadline`; on stop it releases the Lease so another candidate takes over at once.
 * Every write is a compare-and-swap on the Lease's resourceVersion.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { ApiObject, RequestContext, ResourceTarget } from '../core';
import { rfc3339Micro } from '../clock';
import { StatusError } from '../status';
import type { ApiControllerOptions } from './options';

/** kube-controller-manager's defaults. */
export const LEASE_DURATION_MS = 15_000;
export const RENEW_DEADLINE_MS = 10_000;
export const RETRY_PERIOD_MS = 2_000;

export interface LeaderElectorOptions extends Pick<ApiControllerOptions, 'core' | 'naming' | 'clock' | 'user' | 'log'> {
  /** The Lease's name in the system namespace (`<prefix>-controller-manager`, `<prefix>-scheduler`). */
  name: string;
  /** Default `<hostname>_<uuid>`, as upstream's components. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** How long past its lease a leader may go unrenewed before its health check fails (upstream's 20 s). */
const LEADER_HEALTH_TOLERANCE_MS = 20_000;

export class LeaderElector {
  readonly identity: string;
  private readonly target: ResourceTarget;
  private readonly ctx: RequestContext;
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private leading = false;
  private lastRenewed = 0;
  private observed?: LeaseSpec;
  private observedAt = 0;
  private cancel?: () => void;
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly options: LeaderElectorOptions) {
    this.identity = options.identity ?? `${hostname()}_${randomUUID()}`;
    this.target = {
      group: options.naming.groups.coordination,
      version: 'v1',
      resource: 'leases',
      namespace: options.naming.namespaces.system,
      name: options.name,
    };
    this.ctx = { user: options.user, userAgent: `keelson-leader-election/${options.name}` };
    this.leaseMs = options.leaseDurationMs ?? LEASE_DURATION_MS;
    this.renewDeadlineMs = options.renewDeadlineMs ?? RENEW_DEADLINE_MS;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /**
   * Upstream's leaderElection health check: a leader whose lease went unrenewed for its duration
   * and 20 s more is unhealthy (a follower always is healthy).
   */
  check(): void {
    if (this.leading && this.options.clock.now() - this.lastRenewed > this.leaseMs + LEADER_HEALTH_TOLERANCE_MS) {
      throw new Error(`failed election to renew leadership on lease ${this.options.name}`);
    }
  }

  start(): void {
    const tick = () => {
      if (this.stopped || this.running) return;
      this.running = this.round().finally(() => (this.running = undefined));
    };
    this.cancel = this.options.clock.setInterval(tick, this.options.retryPeriodMs ?? RETRY_PERIOD_MS);
    tick();
  }

  /** The round under way, if any: what a test that moves a ManualClock waits for. */
  async idle(): Promise<void> {
    await this.running;
  }

  /** Stop trying; a leader steps down and releases the Lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.running;
    if (!this.leading) return;
    this.stepDown();
    try {
      const current = await this.options.core.get(this.target, {}, this.ctx);
      const spec = (current.spec ?? {}) as LeaseSpec;
      if (spec.holderIdentity !== this.identity) return;
      const now = rfc3339Micro(this.options.clock.now());
      await this.options.core.update(
        this.target,
        { ...current, spec: { ...spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now } },
        {},
        this.ctx,
      );
    } catch (err) {
      this.options.log?.(`leader election ${this.options.name}: releasing: ${(err as Error).message}`);
    }
  }

  /** One try to acquire or renew; a leader that has not renewed within the deadline steps down. */
  private async round(): Promise<void> {
    let ok = false;
    try {
      ok = await this.tryAcquireOrRenew();
    } catch (err) {
      this.options.log?.(`leader election ${this.options.name}: ${(err as Error).message}`);
    }
    const now = this.options.clock.now();
    if (ok) {
      this.lastRenewed = now;
      if (!this.leading && !this.stopped) {
        this.leading = true;
        this.options.log?.(`leader election ${this.options.name}: ${this.identity} became leader`);
        this.options.onStartedLeading();
      }
    } else if (this.leading && now - this.lastRenewed >= this.renewDeadlineMs) {
      this.options.log?.(`leader election ${this.options.name}: ${this.identity} lost the lease`);
      this.stepDown();
    }
  }

  private stepDown(): void {
    if (!this.leading) return;
    this.leading = false;
    this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { core, clock, naming } = this.options;
    const now = clock.now();
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.leaseMs / 1000),
      acquireTime: rfc3339Micro(now),
      renewTime: rfc3339Micro(now),
      leaseTransitions: 0,
    };
    let current: ApiObject;
    try {
      current = await core.get(this.target, {}, this.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
      try {
        await core.create(
          { ...this.target, name: undefined },
          { apiVersion: `${naming.groups.coordination}/v1`, kind: 'Lease', metadata: { name: this.options.name, namespace: this.target.namespace }, spec },
          {},
          this.ctx,
        );
      } catch (createErr) {
        if (StatusError.is(createErr, 'AlreadyExists')) return false;
        throw createErr;
      }
      this.observe(spec, now);
      return true;
    }
    const held = (current.spec ?? {}) as LeaseSpec;
    if (!isDeepStrictEqual(held, this.observed)) this.observe(held, now);
    const holder = held.holderIdentity ?? '';
    const duration = (held.leaseDurationSeconds ?? 0) * 1000;
    if (holder !== '' && holder !== this.identity && this.observedAt + duration > now) return false;
    const next: LeaseSpec =
      holder === this.identity
        ? { ...held, renewTime: spec.renewTime, leaseDurationSeconds: spec.leaseDurationSeconds }
        : { ...spec, leaseTransitions: (held.leaseTransitions ?? 0) + 1 };
    try {
      await core.update(this.target, { ...current, spec: next }, {}, this.ctx);
    } catch (err) {
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return false;
      throw err;
    }
    this.observe(next, now);
    return true;
  }

  private observe(spec: LeaseSpec, at: number): void {
    this.observed = spec;
    this.observedAt = at;
  }
}
