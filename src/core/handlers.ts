/**
 * Handlers for types that are never stored (`ResourceDefinition.notStored`): a create asks a
 * question and the handler answers it, as upstream's review REST storage does. The core holds
 * SelfSubjectReview's (it needs only the caller); the server supplies the ones that need parts
 * above the core, such as TokenReview's authenticator.
 */
import type { ApiObject, RequestContext, WriteOptions } from './api';
import type { Clock } from '../clock';
import { rfc3339 } from '../clock';

export interface CreateHandler {
  /**
   * Answer a create of `body` (already checked against its kind's schema); the result is
   * returned with 201. For a create-only subresource, `parent` is the object it belongs to.
   */
  create(body: ApiObject, options: WriteOptions, ctx: RequestContext, parent?: ApiObject): Promise<ApiObject>;
}

/** `kubectl auth whoami`: the caller's user attributes, as the request was authenticated (and impersonated). */
export function selfSubjectReviewHandler(clock: Clock): CreateHandler {
  return {
    async create(body, _options, ctx) {
      const { username, uid, groups, extra } = ctx.user;
      const userInfo: Record<string, unknown> = { username };
      if (uid) userInfo.uid = uid;
      if (groups.length > 0) userInfo.groups = [...groups];
      if (extra && Object.keys(extra).length > 0) userInfo.extra = extra;
      return { ...body, metadata: { ...(body.metadata ?? {}), creationTimestamp: rfc3339(clock.now()) }, status: { userInfo } };
    },
  };
}
