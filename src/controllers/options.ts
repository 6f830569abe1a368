/** What a controller acting through the API is given. */
import type { CoreApi, RequestContext } from '../core/api';
import type { SharedInformers } from '../core/informer';
import type { Clock } from '../clock';
import type { Naming } from '../naming';
import type { WorkQueueMetrics } from './work-queue';

export interface ApiControllerOptions {
  core: CoreApi;
  /** The controller group's shared informers, watching as the group (core/informer.ts); without them, the controller's own, watching as it. */
  informers?: SharedInformers;
  naming: Naming;
  clock: Clock;
  /** Who the controller acts as. */
  user: RequestContext['user'];
  log?: (message: string) => void;
  /** Upstream's workqueue metrics for the controller's queue; none: not kept. */
  queueMetrics?: WorkQueueMetrics;
}
