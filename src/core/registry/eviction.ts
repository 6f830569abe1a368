/**
 * `pods/<name>/eviction` (policy/v1 Eviction), as upstream's EvictionREST: delete a pod unless its
 * PodDisruptionBudget forbids it.
 *
 * - A pod that is Pending, Succeeded, Failed or already being deleted is deleted at once.
 * - Otherwise the budget whose selector picks the pod is consulted (none: delete; more than one:
 *   500). A budget whose status is older than its spec is 429 ("still being processed"); one with
 *   no disruption allowed is 429 with a `DisruptionBudget` cause ("needs N healthy pods and has M
 *   currently"); otherwise its `disruptionsAllowed` goes down by one and the pod is entered in its
 *   `disruptedPods`, in one guarded status write (retried on conflict), before the delete. A pod
 *   that is not Ready while the budget has its healthy pods is deleted without counting.
 * - The deleted pod first gets the `DisruptionTarget` condition (`EvictionByEvictionAPI`). The
 *   Eviction's `deleteOptions` apply to the delete, and `dryRun` to everything.
 *
 * The answer is a bare Success Status (201).
 */
import type { ApiObject, CoreApi, DeleteOptions, RequestContext, ResourceTarget, WriteOptions } from '../api';
import type { CreateHandler } from '../handlers';
import type { Clock } from '../../clock';
import { rfc3339 } from '../../clock';
import { badRequest, forbidden, StatusError, successStatus, tooManyRequests, unclassifiedError } from '../../status';
import { emptyBudgetStatus, withDisruptionAllowed, type PodDisruptionBudget } from '../resources/poddisruptionbudgets';
import { isPodReady, withDisruptionTarget, type PodCondition } from '../resources/pods';
import { checkDeletePreconditions } from './deletion';
import { isEmptyLabelSelector, labelSelectorMatches } from '../validation/selectors';

interface Eviction extends ApiObject {
  deleteOptions?: DeleteOptions;
}

type PodLike = ApiObject & { status?: { phase?: string; conditions?: PodCondition[] } };

/** How many times a budget's status write is tried again after a conflict (upstream's EvictionsRetry steps). */
const EVICTION_RETRIES = 5;
/** upstream's MaxDisruptedPodSize. */
const MAX_DISRUPTED_PODS = 2000;

const BUDGET_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

function budgetRefusal(retryAfterSeconds: number, cause: string): StatusError {
  const err = tooManyRequests(BUDGET_MESSAGE, retryAfterSeconds);
  const details = (err.status.details ??= {});
  if (!details.retryAfterSeconds) delete details.retryAfterSeconds;
  details.causes = [...(details.causes ?? []), { reason: 'DisruptionBudget', message: cause }];
  return err;
}

/** The kind a pod's delete preconditions are worded by. */
const POD_KIND = { group: '', kind: 'Pod' };

/** upstream's canIgnorePDB. */
const canIgnoreBudget = (pod: PodLike) => ['Succeeded', 'Failed', 'Pending'].includes(pod.status?.phase ?? '') || !!pod.metadata?.deletionTimestamp;

export function podEvictionHandler(core: () => CoreApi, clock: Clock): CreateHandler {
  /** The server's own writes (the budget's status, the pod's condition), as upstream's loopback client. */
  const server: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, userAgent: 'keelson-apiserver' };

  return {
    async create(body: ApiObject, options: WriteOptions, ctx: RequestContext, parent?: ApiObject): Promise<ApiObject> {
      const eviction = body as Eviction;
      const name = parent?.metadata?.name ?? '';
      const namespace = parent?.metadata?.namespace ?? '';
      if (eviction.metadata?.name && eviction.metadata.name !== name) throw badRequest('name in URL does not match name in Eviction object');
      const dryRun = options.dryRun ?? eviction.deleteOptions?.dryRun;
      const deleteOptions: DeleteOptions = { ...eviction.deleteOptions, ...(dryRun ? { dryRun } : {}) };
      const podTarget: ResourceTarget = { group: '', version: 'v1', resource: 'pods', namespace, name };
      const api = core();
      const pod = (await api.get(podTarget, {}, server)) as PodLike;

      if (!canIgnoreBudget(pod)) {
        const budgets = await matchingBudgets(api, pod);
        if (budgets.length > 1) throw unclassifiedError('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
        const budget = budgets[0];
        const status = budget?.status;
        const unhealthyWithinBudget =
          budget && !isPodReady(pod) && (status?.currentHealthy ?? 0) >= (status?.desiredHealthy ?? 0) && (status?.desiredHealthy ?? 0) > 0;
        const alwaysAllow = budget && !isPodReady(pod) && budget.spec?.unhealthyPodEvictionPolicy === 'AlwaysAllow';
        if (budget && !unhealthyWithinBudget && !alwaysAllow) await takeDisruption(api, budget, name, dryRun !== undefined && dryRun.length > 0);
      }
      await deleteWithCondition(api, podTarget, pod, deleteOptions, ctx);
      // upstream answers with a bare Success Status (no code) and 201 Created.
      const { code: _code, ...status } = successStatus();
      return status as unknown as ApiObject;
    },
  };

  /** The budgets whose (non-empty) selector picks the pod: an empty one matches nothing here, as upstream. */
  async function matchingBudgets(api: CoreApi, pod: PodLike): Promise<PodDisruptionBudget[]> {
    const target: ResourceTarget = { group: 'policy', version: 'v1', resource: 'poddisruptionbudgets', namespace: pod.metadata?.namespace ?? '' };
    let items: ApiObject[];
    try {
      items = (await api.list(target, {}, server)).items;
    } catch (err) {
      // PodDisruptionBudgets switched off (--runtime-config): no budget guards the pod.
      if (StatusError.is(err, 'NotFound')) return [];
      throw err;
    }
    return (items as PodDisruptionBudget[]).filter((pdb) => {
      const selector = pdb.spec?.selector;
      return !!selector && !isEmptyLabelSelector(selector) && labelSelectorMatches(selector, pod.metadata?.labels);
    });
  }

  /** upstream's checkAndDecrement, retried with a fresh read on a conflict. */
  async function takeDisruption(api: CoreApi, first: PodDisruptionBudget, podName: string, dryRun: boolean): Promise<void> {
    let pdb = first;
    const target: ResourceTarget = {
      group: 'policy',
      version: 'v1',
      resource: 'poddisruptionbudgets',
      namespace: pdb.metadata?.namespace ?? '',
      name: pdb.metadata?.name ?? '',
    };
    for (let attempt = 0; ; attempt++) {
      const status = pdb.status ?? emptyBudgetStatus();
      const pdbName = pdb.metadata?.name ?? '';
      if ((status.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0))
        throw budgetRefusal(10, `The disruption budget ${pdbName} is still being processed by the server.`);
      const refuse = (why: string) => forbidden({ group: 'policy', resource: 'poddisruptionbudget' }, pdbName, why);
      if (status.disruptionsAllowed < 0) throw refuse('pdb disruptions allowed is negative');
      if (Object.keys(status.disruptedPods ?? {}).length > MAX_DISRUPTED_PODS)
        throw refuse('DisruptedPods map too big - too many evictions not confirmed by PDB controller');
      if (status.disruptionsAllowed === 0) {
        throw budgetRefusal(0, `The disruption budget ${pdbName} needs ${status.desiredHealthy} healthy pods and has ${status.currentHealthy} currently`);
      }
      if (dryRun) return;
      const next = {
        ...status,
        disruptionsAllowed: status.disruptionsAllowed - 1,
        disruptedPods: { ...status.disruptedPods, [podName]: rfc3339(clock.now()) },
      };
      if (next.disruptionsAllowed === 0)
        next.conditions = withDisruptionAllowed(status.conditions, 'False', 'InsufficientPods', '', pdb.metadata?.generation, rfc3339(clock.now()));
      try {
        await api.update({ ...target, subresource: 'status' }, { ...pdb, status: next }, {}, server);
        return;
      } catch (err) {
        if (!StatusError.is(err, 'Conflict') || attempt >= EVICTION_RETRIES) {
          if (StatusError.is(err, 'Conflict')) throw budgetRefusal(10, `The disruption budget ${pdbName} is still being processed by the server.`);
          throw err;
        }
        pdb = (await api.get(target, {}, server)) as PodDisruptionBudget;
      }
    }
  }

  /**
   * upstream's addConditionAndDeletePod: the delete's preconditions are checked first (nothing is
   * written for a pod they refuse), then DisruptionTarget (EvictionByEvictionAPI), then the delete.
   */
  async function deleteWithCondition(api: CoreApi, target: ResourceTarget, pod: PodLike, options: DeleteOptions, ctx: RequestContext): Promise<void> {
    const dryRun = (options.dryRun ?? []).length > 0;
    checkDeletePreconditions(POD_KIND, pod, options.preconditions);
    if (!dryRun && !pod.metadata?.deletionTimestamp) {
      const conditions = withDisruptionTarget(pod.status?.conditions, 'EvictionByEvictionAPI', 'Eviction API: evicting', rfc3339(clock.now()));
      try {
        await api.update({ ...target, subresource: 'status' }, { ...pod, status: { ...pod.status, conditions } }, {}, server);
      } catch (err) {
        // A pod changed since it was read is deleted all the same (the condition is informative).
        if (!StatusError.is(err, 'Conflict')) throw err;
      }
    }
    await api.delete(target, options, ctx);
  }
}
