/**
 * What a controller acting through the API is given: one declaration of the options the
 * controllers share. A controller's own options extend it, or pick from it the part it uses.
 */
import type { CoreApi, UserInfo, SharedInformers } from '../core';
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
  user: UserInfo;
  /**
   * Who its own watches act as (default `user`): upstream's controllers share the controller
   * manager's informers, so a controller's own role need not read what it only watches.
   */
  watchAs?: UserInfo;
  log?: (message: string) => void;
  /** Upstream's workqueue metrics for the controller's queue; none: not kept. */
  queueMetrics?: WorkQueueMetrics;
}
