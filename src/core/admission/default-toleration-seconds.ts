/**
 * DefaultTolerationSeconds, upstream's admission plugin of the same name: a new pod that does
 * not already tolerate them gets NoExecute tolerations of the node's not-ready and unreachable
 * taints for 300 seconds, so its node's controller evicts it five minutes after the node is lost
 * rather than at once.
 */
import type { Naming } from '../../naming';
import type { AdmissionPlugin } from './types';
import type { Toleration } from '../resources/nodes';

export const DEFAULT_TOLERATION_SECONDS = 300;

export function defaultTolerationSeconds(naming: Naming, seconds = DEFAULT_TOLERATION_SECONDS): AdmissionPlugin {
  const keys = [naming.key('not-ready', 'node'), naming.key('unreachable', 'node')];
  return {
    name: 'DefaultTolerationSeconds',
    admit(a) {
      if (a.group !== '' || a.resource !== 'pods' || a.subresource !== '' || a.operation !== 'CREATE' || !a.object) return;
      const spec = ((a.object as { spec?: { tolerations?: Toleration[] } }).spec ??= {});
      const tolerations = spec.tolerations ?? [];
      const added: Toleration[] = [];
      for (const key of keys) {
        // An empty key tolerates every taint; an empty effect every effect.
        const tolerated = tolerations.some((t) => (t.key === key || !t.key) && (t.effect === 'NoExecute' || !t.effect));
        if (!tolerated) added.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds });
      }
      if (added.length > 0) spec.tolerations = [...tolerations, ...added];
    },
  };
}
