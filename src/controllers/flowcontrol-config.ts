/**
 * API Priority and Fairness' configuration controller, as upstream's apiserver keeps its
 * configuration (the `priority-and-fairness-config-producer` hook's ensurer, and the APF
 * controller's status writes): at start and whenever a FlowSchema or PriorityLevelConfiguration
 * changes,
 * - the mandatory objects (`exempt`, `catch-all`) are created when missing and their spec and
 *   autoupdate annotation always restored (`exempt` level's `exempt` section excepted);
 * - the suggested objects are created when missing and updated while their autoupdate
 *   annotation (`apf.<key domain>/autoupdate-spec`) is true; without a readable annotation an
 *   object of generation 1 counts as true and a later one as false, and the annotation is
 *   written down so;
 * - an object that is neither but carries a true annotation (a default of an earlier release) is
 *   deleted;
 * - every FlowSchema's `Dangling` condition says whether its priority level exists.
 * An ordinary API client of the core, acting as the server itself.
 */
import {
  type ApiObject,
  type FlowSchema,
  type FlowSchemaCondition,
  flowControlBootstrap,
  type InformerView,
  type PriorityLevelConfiguration,
  type RequestContext,
  type ResourceTarget,
  FLOW_SCHEMA_CONDITION_DANGLING,
  PRIORITY_LEVEL_EXEMPT,
  followResource,
  semanticEqual,
} from '../core';
import { StatusError } from '../status';
import { rfc3339 } from '../clock';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

/** Go's strconv.ParseBool: the spellings of true and false it accepts, else undefined. */
export function parseGoBool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/** Upstream's Dangling condition for a schema whose priority level exists or not. */
export function danglingCondition(priorityLevel: string, exists: boolean): Required<Omit<FlowSchemaCondition, 'lastTransitionTime'>> {
  return exists
    ? {
        type: FLOW_SCHEMA_CONDITION_DANGLING,
        status: 'False',
        reason: 'Found',
        message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(priorityLevel)} and it exists`,
      }
    : {
        type: FLOW_SCHEMA_CONDITION_DANGLING,
        status: 'True',
        reason: 'NotFound',
        message: `This FlowSchema references the PriorityLevelConfiguration object named ${JSON.stringify(priorityLevel)} but there is no such object`,
      };
}

type ConfigObject = FlowSchema | PriorityLevelConfiguration;

/** One kind's bootstrap objects and how to reach them. */
interface Kind {
  target: ResourceTarget;
  view: InformerView;
  mandatory: ConfigObject[];
  suggested: ConfigObject[];
  /** The spec the object should have, from the wanted one and the current one. */
  wantedSpec(wanted: ConfigObject, current: ConfigObject): unknown;
}

export class FlowControlConfigController {
  private readonly ctx: RequestContext;
  private readonly kinds: Kind[];
  private readonly flowSchemas: Kind;
  private readonly priorityLevels: Kind;
  private readonly queue: WorkQueue<string>;

  constructor(private readonly options: ApiControllerOptions) {
    const { naming } = options;
    this.ctx = { user: options.user, userAgent: 'keelson-apiserver/priority-and-fairness-config' };
    const bootstrap = flowControlBootstrap(naming);
    const target = (resource: string): ResourceTarget => ({ group: naming.groups.flowcontrol, version: 'v1', resource });
    this.queue = new WorkQueue<string>(
      (key) => key,
      () => this.sync(),
      { name: 'priority-and-fairness-config', metrics: options.queueMetrics, clock: options.clock },
    );
    const follow = (t: ResourceTarget) => followResource(options, t, this.ctx, () => this.queue.add('config'));
    this.priorityLevels = {
      target: target('prioritylevelconfigurations'),
      view: follow(target('prioritylevelconfigurations')),
      ...bootstrap.priorityLevels,
      // The exempt level's `exempt` section is the administrator's (upstream's ensurer and validation agree).
      wantedSpec: (wanted, current) =>
        wanted.metadata?.name === PRIORITY_LEVEL_EXEMPT
          ? { ...(wanted as PriorityLevelConfiguration).spec, exempt: (current as PriorityLevelConfiguration).spec?.exempt }
          : wanted.spec,
    };
    this.flowSchemas = {
      target: target('flowschemas'),
      view: follow(target('flowschemas')),
      ...bootstrap.flowSchemas,
      wantedSpec: (wanted) => wanted.spec,
    };
    this.kinds = [this.priorityLevels, this.flowSchemas];
  }

  start(): void {
    this.queue.add('config');
    this.queue.startWhen(Promise.all(this.kinds.map((k) => k.view.synced)), (err) =>
      this.options.log?.(`priority-and-fairness-config: informers failed to start: ${err.message}`),
    );
  }

  /** Resolves when the configuration has been brought up to date and nothing is queued. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    for (const kind of this.kinds) kind.view.stop();
  }

  private async sync(): Promise<void> {
    for (const kind of this.kinds) {
      for (const wanted of kind.mandatory) await this.ensure(kind, wanted, true);
      for (const wanted of kind.suggested) await this.ensure(kind, wanted, false);
      await this.removeUnwanted(kind);
    }
    await this.updateDanglingConditions();
  }

  /** Upstream's ensurer for one bootstrap object. */
  private async ensure(kind: Kind, wanted: ConfigObject, mandatory: boolean): Promise<void> {
    const name = wanted.metadata!.name!;
    const current = kind.view.objects.get(`/${name}`) as ConfigObject | undefined;
    if (!current) {
      await this.write(() => this.options.core.create(kind.target, structuredClone(wanted), {}, this.ctx));
      return;
    }
    const key = this.options.naming.labels.apfAutoupdate;
    const annotation = parseGoBool(current.metadata?.annotations?.[key]);
    const autoUpdate = mandatory || (annotation ?? current.metadata?.generation === 1);
    const updateAnnotation = annotation !== autoUpdate;
    const spec = kind.wantedSpec(wanted, current);
    const specChanged = autoUpdate && !semanticEqual(spec, current.spec);
    if (!updateAnnotation && !specChanged) return;
    const next: ApiObject = structuredClone(current);
    if (specChanged) next.spec = structuredClone(spec);
    if (updateAnnotation) next.metadata = { ...next.metadata, annotations: { ...(next.metadata?.annotations ?? {}), [key]: String(autoUpdate) } };
    await this.write(() => this.options.core.update({ ...kind.target, name }, next, {}, this.ctx));
  }

  /** Upstream's RemoveUnwantedObjects: a default of an earlier release that is still auto-updated goes. */
  private async removeUnwanted(kind: Kind): Promise<void> {
    const names = new Set([...kind.mandatory, ...kind.suggested].map((o) => o.metadata!.name));
    const key = this.options.naming.labels.apfAutoupdate;
    for (const object of [...kind.view.objects.values()]) {
      const meta = object.metadata ?? {};
      if (names.has(meta.name) || parseGoBool(meta.annotations?.[key]) !== true) continue;
      await this.write(() =>
        this.options.core.delete({ ...kind.target, name: meta.name }, { preconditions: { uid: meta.uid, resourceVersion: meta.resourceVersion } }, this.ctx),
      );
    }
  }

  /** The Dangling condition of every schema, written through `/status` where it changed. */
  private async updateDanglingConditions(): Promise<void> {
    for (const object of [...this.flowSchemas.view.objects.values()]) {
      const fs = object as FlowSchema;
      const plName = fs.spec?.priorityLevelConfiguration?.name ?? '';
      const wanted = danglingCondition(plName, this.priorityLevels.view.objects.has(`/${plName}`));
      const conditions = fs.status?.conditions ?? [];
      const current = conditions.find((c) => c.type === FLOW_SCHEMA_CONDITION_DANGLING);
      if (current && current.status === wanted.status && current.reason === wanted.reason && current.message === wanted.message) continue;
      const condition: FlowSchemaCondition = { ...wanted, lastTransitionTime: rfc3339(this.options.clock.now()) };
      const status = { ...fs.status, conditions: [...conditions.filter((c) => c !== current), condition] };
      await this.write(() =>
        this.options.core.update(
          { ...this.flowSchemas.target, name: fs.metadata!.name, subresource: 'status' },
          { ...structuredClone(fs), status } as ApiObject,
          {},
          this.ctx,
        ),
      );
    }
  }

  /** A write that lost a race (changed, gone or made meanwhile) is left to the next pass, which the informer's event brings. */
  private async write(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (err) {
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound') || StatusError.is(err, 'AlreadyExists')) return;
      throw err;
    }
  }
}
