/**
 * Waiting for an informer to hear what was written: a controller given a test's
 * `SharedInformers` follows the same informer as the test's view of it, so once the view holds
 * what the store holds, the controller has heard every change made before the call.
 */
import type { ApiObject, CoreApi, RequestContext, ResourceTarget } from '../../src/core/api';
import type { InformerView } from '../../src/core/informer';
import { eventually } from './eventually';

const nameOf = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/**
 * Resolves once `view` holds exactly the objects (and their resourceVersions) a list of
 * `target` holds now. For a resource nothing else writes meanwhile.
 */
export async function caughtUp(view: InformerView, core: CoreApi, target: ResourceTarget, ctx: RequestContext): Promise<void> {
  const listed = new Map((await core.list(target, {}, ctx)).items.map((o) => [nameOf(o), o.metadata?.resourceVersion]));
  await eventually(
    () => {
      const held = [...view.objects.values()];
      return held.length === listed.size && held.every((o) => listed.get(nameOf(o)) === o.metadata?.resourceVersion);
    },
    { what: `the informer of ${target.resource} to hear every change` },
  );
}
