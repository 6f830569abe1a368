/**
 * The ValidatingAdmissionPolicy status controller, as upstream's
 * `validatingadmissionpolicy-status-controller`: every policy whose generation it has not yet
 * checked gets its expressions type-checked against the served schema, and its status records
 * the warnings (`status.typeChecking.expressionWarnings`) and the generation checked.
 */
import { type ApiObject, type RequestContext, type ResourceTarget, followResource, type InformerView, type ResourceDefinition, typeCheckPolicy } from '../core';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export interface PolicyStatusOptions extends ApiControllerOptions {
  resources: readonly ResourceDefinition[];
}

export class AdmissionPolicyStatusController {
  private readonly policies: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly target: ResourceTarget;

  constructor(private readonly options: PolicyStatusOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/validatingadmissionpolicy-status-controller' };
    this.target = { group: options.naming.groups.admissionregistration, version: 'v1', resource: 'validatingadmissionpolicies' };
    this.queue = new WorkQueue<string>(
      (name) => name,
      (name) => this.sync(name),
      { name: 'validatingadmissionpolicy-status', metrics: options.queueMetrics },
    );
    this.policies = followResource(options, this.target, this.ctx, (c) => {
      if (c) this.queue.add(c.object.metadata!.name!);
      else for (const p of this.policies.objects.values()) this.queue.add(p.metadata!.name!);
    });
  }

  start(): void {
    this.queue.startWhen(this.policies.synced, (err) =>
      this.options.log?.(`validatingadmissionpolicy-status-controller: informer failed to start: ${err.message}`),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.policies.stop();
  }

  private async sync(name: string): Promise<void> {
    const policy = this.policies.objects.get(`/${name}`) as (ApiObject & { status?: { observedGeneration?: number } }) | undefined;
    if (!policy || policy.metadata?.deletionTimestamp) return;
    const generation = policy.metadata?.generation ?? 0;
    if (policy.status?.observedGeneration === generation) return;
    const warnings = typeCheckPolicy(policy, this.options.resources, this.options.naming);
    const status = { ...(policy.status ?? {}), observedGeneration: generation, typeChecking: warnings.length > 0 ? { expressionWarnings: warnings } : {} };
    try {
      await this.options.core.update({ ...this.target, name, subresource: 'status' }, { ...policy, status }, {}, this.ctx);
    } catch (err) {
      // Changed or gone meanwhile: the informer brings the newer version back.
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return;
      throw err;
    }
  }
}
