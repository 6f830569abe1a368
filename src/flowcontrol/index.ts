/**
 * API Priority and Fairness (docs/ARCHITECTURE.md, "Priority and fairness"): the dispatcher
 * both doors admit requests through, the arithmetic it shares seats by, and the debug dumps.
 */
export {
  FlowControl,
  BORROWING_ADJUSTMENT_MS,
  type Admission,
  type AdmitOptions,
  type Classification,
  type FlowControlOptions,
  type Ticket,
} from './flow-control';
export type { FlowRequest } from './classify';
export { listHintsOf, listHintsOfQuery, type ListHints } from './work-estimate';
export type { RejectReason, WorkEstimate } from './queue-set';
export { dumpPriorityLevels, dumpQueues, dumpRequests } from './dump';
