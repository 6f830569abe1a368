/**
 * Events (events v1) a component records about an object, as client-go's event recorder does
 * for controllers and the scheduler. Recording is best effort: a failure is logged and dropped.
 */
import type { ApiObject, CoreApi, RequestContext } from '../core/api';
import type { Clock } from '../clock';
import { rfc3339Micro } from '../clock';
import type { Naming } from '../naming';

export interface EventRecorderOptions {
  core: CoreApi;
  naming: Naming;
  clock: Clock;
  ctx: RequestContext;
  /** `reportingController` of every event. */
  controller: string;
  /** `reportingInstance` of every event. */
  instance: string;
  log?: (message: string) => void;
}

export interface EventSubject {
  apiVersion: string;
  kind: string;
  object: ApiObject;
}

export class EventRecorder {
  constructor(private readonly options: EventRecorderOptions) {}

  async record(about: EventSubject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): Promise<void> {
    const { core, naming, clock, ctx } = this.options;
    const now = clock.now();
    const meta = about.object.metadata ?? {};
    const namespace = meta.namespace || 'default';
    const event: ApiObject = {
      apiVersion: `${naming.groups.events}/v1`,
      kind: 'Event',
      metadata: { name: `${meta.name ?? 'object'}.${now.toString(16)}${Math.floor(Math.random() * 0xffffff).toString(16)}`, namespace },
      eventTime: rfc3339Micro(now),
      reportingController: this.options.controller,
      reportingInstance: this.options.instance,
      action,
      reason,
      regarding: { kind: about.kind, apiVersion: about.apiVersion, ...(meta.namespace ? { namespace: meta.namespace } : {}), name: meta.name, uid: meta.uid, resourceVersion: meta.resourceVersion },
      note,
      type,
    };
    try {
      await core.create({ group: naming.groups.events, version: 'v1', resource: 'events', namespace }, event, {}, ctx);
    } catch (err) {
      this.options.log?.(`${this.options.controller}: recording ${reason} for ${namespace}/${meta.name ?? ''}: ${(err as Error).message}`);
    }
  }
}
