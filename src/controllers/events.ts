/**
 * Events a component records about an object, as client-go's recorders do. Two kinds, as
 * upstream's components use them: the events group's (the scheduler's, client-go's
 * `events` recorder: `eventTime`, `reportingController`, `action`), and the core group's
 * (client-go's legacy `record` recorder, which upstream's ReplicaSet controller uses: `source`,
 * first and last timestamps, a `count` that a repeat of the same event raises instead of
 * writing another). Recording is best effort: a failure is logged and dropped.
 */
import type { ApiObject, CoreApi, RequestContext } from '../core';
import type { Clock } from '../clock';
import { rfc3339, rfc3339Micro } from '../clock';
import type { Naming } from '../naming';
import { StatusError } from '../status';

export interface EventRecorderOptions {
  core: CoreApi;
  naming: Naming;
  clock: Clock;
  ctx: RequestContext;
  /** `reportingController` of every event; for core events also `source.component`. */
  controller: string;
  /** `reportingInstance` of every event (core events: `source.host`, empty when unset). */
  instance?: string;
  /** The events group's API (default) or the core group's, as client-go's legacy recorder writes. */
  api?: 'events' | 'core';
  log?: (message: string) => void;
}

export interface EventSubject {
  apiVersion: string;
  kind: string;
  object: ApiObject;
}

/** client-go's legacy recorder remembers this many distinct events to count their repeats (its LRU). */
const MAX_REMEMBERED_EVENTS = 4096;

interface Recorded {
  name: string;
  count: number;
  firstTimestamp: string;
}

export class EventRecorder {
  /** Core events written, by what makes a repeat the same event, oldest first. */
  private readonly recorded = new Map<string, Recorded>();

  constructor(private readonly options: EventRecorderOptions) {}

  record(about: EventSubject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    return this.options.api === 'core' ? this.recordCore(about, type, reason, note) : this.recordEvent(about, type, reason, action, note);
  }

  private regarding(about: EventSubject): Record<string, unknown> {
    const meta = about.object.metadata ?? {};
    return {
      kind: about.kind,
      apiVersion: about.apiVersion,
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
      name: meta.name,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
    };
  }

  private name(about: EventSubject, now: number): string {
    return `${about.object.metadata?.name ?? 'object'}.${now.toString(16)}${Math.floor(Math.random() * 0xffffff).toString(16)}`;
  }

  private failed(reason: string, about: EventSubject, err: unknown): void {
    const meta = about.object.metadata ?? {};
    this.options.log?.(`${this.options.controller}: recording ${reason} for ${meta.namespace || 'default'}/${meta.name ?? ''}: ${(err as Error).message}`);
  }

  private async recordEvent(about: EventSubject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    const { core, naming, clock, ctx } = this.options;
    const now = clock.now();
    const namespace = about.object.metadata?.namespace || 'default';
    const event: ApiObject = {
      apiVersion: `${naming.groups.events}/v1`,
      kind: 'Event',
      metadata: { name: this.name(about, now), namespace },
      eventTime: rfc3339Micro(now),
      reportingController: this.options.controller,
      reportingInstance: this.options.instance ?? '',
      action,
      reason,
      regarding: this.regarding(about),
      note,
      type,
    };
    try {
      await core.create({ group: naming.groups.events, version: 'v1', resource: 'events', namespace }, event, {}, ctx);
    } catch (err) {
      this.failed(reason, about, err);
    }
  }

  /**
   * A core Event; a repeat of one already written (same object, type, reason and message)
   * raises its `count` and `lastTimestamp` with a merge patch, as the legacy recorder's
   * correlator does, and is written afresh when that event is gone (expired).
   */
  private async recordCore(about: EventSubject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const { core, clock, ctx, controller } = this.options;
    const now = clock.now();
    const namespace = about.object.metadata?.namespace || 'default';
    const regarding = this.regarding(about);
    const key = JSON.stringify([regarding.kind, regarding.namespace, regarding.name, regarding.uid, type, reason, message]);
    const target = { group: '', version: 'v1', resource: 'events', namespace };
    const seen = this.recorded.get(key);
    const timestamp = rfc3339(now);
    if (seen) {
      this.recorded.delete(key);
      this.recorded.set(key, seen);
      seen.count++;
      try {
        await core.patch({ ...target, name: seen.name }, { type: 'merge', body: { count: seen.count, lastTimestamp: timestamp } }, {}, ctx);
        return;
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) return this.failed(reason, about, err);
      }
    }
    const recorded: Recorded = seen ?? { name: this.name(about, now), count: 1, firstTimestamp: timestamp };
    const event: ApiObject = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: recorded.name, namespace },
      involvedObject: regarding,
      reason,
      message,
      source: { component: controller, ...(this.options.instance ? { host: this.options.instance } : {}) },
      firstTimestamp: recorded.firstTimestamp,
      lastTimestamp: timestamp,
      count: recorded.count,
      type,
      reportingComponent: controller,
      reportingInstance: this.options.instance ?? '',
    };
    try {
      await core.create(target, event, {}, ctx);
    } catch (err) {
      return this.failed(reason, about, err);
    }
    if (!seen) {
      if (this.recorded.size >= MAX_REMEMBERED_EVENTS) this.recorded.delete(this.recorded.keys().next().value!);
      this.recorded.set(key, recorded);
    }
  }
}
