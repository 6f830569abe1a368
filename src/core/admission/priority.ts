/**
 * Priority, upstream's admission plugin of the same name:
 *
 * - a new pod gets the `priority` (and `preemptionPolicy`) of its `priorityClassName`, or of the
 *   global default class (the lowest-valued one marked `globalDefault`) when it names none, or 0
 *   and PreemptLowerPriority when there is none. A class that does not exist is 403; a pod that
 *   sets a different priority or preemption policy itself is 403;
 * - an update of a pod keeps the priority it was given;
 * - a PriorityClass may be marked `globalDefault` only while no other class is (403).
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { forbidden } from '../../status';
import type { PriorityClass } from '../resources/priorityclasses';
import type { AdmissionReader } from './reader';
import type { AdmissionAttributes, AdmissionPlugin } from './types';

type PodLike = ApiObject & { spec?: { priorityClassName?: string; priority?: number; preemptionPolicy?: string } };

export interface PriorityOptions {
  naming: Naming;
  reader: AdmissionReader;
  /** Every PriorityClass (the watch cache's). */
  classes(): Promise<readonly PriorityClass[]>;
}

export function priorityAdmission({ naming, reader, classes }: PriorityOptions): AdmissionPlugin {
  const group = naming.groups.scheduling;
  const refuse = (a: AdmissionAttributes, message: string) => forbidden({ group: a.group, resource: a.resource }, a.name, message);

  /** upstream's getDefaultPriorityClass: the global default with the lowest value. */
  async function defaultClass(): Promise<PriorityClass | undefined> {
    let found: PriorityClass | undefined;
    for (const pc of await classes()) if (pc.globalDefault && (!found || (pc.value ?? 0) < (found.value ?? 0))) found = pc;
    return found;
  }

  async function admitPodCreate(a: AdmissionAttributes): Promise<void> {
    const spec = ((a.object as PodLike).spec ??= {});
    let priority = 0;
    let policy: string | undefined = 'PreemptLowerPriority';
    if (!spec.priorityClassName) {
      const pc = await defaultClass();
      if (pc) {
        spec.priorityClassName = pc.metadata?.name;
        priority = pc.value ?? 0;
        policy = pc.preemptionPolicy;
      }
    } else {
      const pc = (await reader.get({ group, version: 'v1', resource: 'priorityclasses', name: spec.priorityClassName })) as PriorityClass | undefined;
      if (!pc) throw refuse(a, `no PriorityClass with name ${spec.priorityClassName} was found`);
      priority = pc.value ?? 0;
      policy = pc.preemptionPolicy;
    }
    if (spec.priority !== undefined && spec.priority !== null && spec.priority !== priority) {
      throw refuse(
        a,
        `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`,
      );
    }
    spec.priority = priority;
    if (policy !== undefined) {
      if (spec.preemptionPolicy !== undefined && spec.preemptionPolicy !== null && spec.preemptionPolicy !== policy) {
        throw refuse(
          a,
          `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`,
        );
      }
      spec.preemptionPolicy = policy;
    }
  }

  async function validateClass(a: AdmissionAttributes): Promise<void> {
    const pc = await defaultClass();
    if (!pc) return;
    if (a.operation === 'CREATE' || pc.metadata?.name !== a.oldObject?.metadata?.name) {
      throw refuse(a, `PriorityClass ${pc.metadata?.name} is marked as default. Only one default can exist`);
    }
  }

  return {
    name: 'Priority',
    // Anything but a pod's create or update: nothing to do, at once.
    admit(a) {
      if (a.group !== '' || a.resource !== 'pods' || a.subresource !== '' || !a.object) return;
      if (a.operation === 'CREATE') return admitPodCreate(a);
      if (a.operation === 'UPDATE') {
        // The priority given at create stays, as the pod's spec keeps it.
        const spec = ((a.object as PodLike).spec ??= {});
        const old = (a.oldObject as PodLike | undefined)?.spec;
        if ((spec.priority === undefined || spec.priority === null) && old?.priority !== undefined) spec.priority = old.priority;
        if ((spec.preemptionPolicy === undefined || spec.preemptionPolicy === null) && old?.preemptionPolicy !== undefined)
          spec.preemptionPolicy = old.preemptionPolicy;
      }
    },
    validate(a) {
      if (a.group !== group || a.resource !== 'priorityclasses' || a.subresource !== '' || (a.operation !== 'CREATE' && a.operation !== 'UPDATE')) return;
      if (!(a.object as PriorityClass | undefined)?.globalDefault) return;
      return validateClass(a);
    },
  };
}
