/**
 * TokenReview (`authentication.<vendor>/v1`), as upstream's token review storage: authenticate
 * `spec.token` with the server's chain and answer in `status` whether it is valid and for whom.
 * A missing token is a 400. Only bearer-token methods take part: a review never becomes
 * anonymous, and the reason a token was refused is reported generically, never the token.
 */
import type { ApiObject, CreateHandler } from '../core';
import { badRequest } from '../status';
import type { Authenticator } from './types';

export interface TokenReviewOptions {
  authenticator: Authenticator;
  /** `--api-audiences`: the audiences a review without `spec.audiences` is for. */
  apiAudiences: readonly string[];
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
}

export function tokenReviewHandler(options: TokenReviewOptions): CreateHandler {
  return {
    async create(body: ApiObject) {
      const spec = (typeof body.spec === 'object' && body.spec !== null ? body.spec : {}) as Record<string, unknown>;
      const token = typeof spec.token === 'string' ? spec.token : '';
      if (token === '') throw badRequest('token is required for TokenReview in authentication');
      const audiences = stringList(spec.audiences) ?? [];
      const result = await options.authenticator.authenticate({ token });
      const status: Record<string, unknown> = { user: {} };
      if (result.outcome === 'authenticated') {
        const { username, uid, groups, extra } = result.user;
        const user: Record<string, unknown> = { username };
        if (uid) user.uid = uid;
        if (groups.length > 0) user.groups = [...groups];
        if (extra && Object.keys(extra).length > 0) user.extra = extra;
        status.authenticated = true;
        status.user = user;
        status.audiences = result.audiences ?? (audiences.length > 0 ? audiences : [...options.apiAudiences]);
      } else {
        status.error = '[invalid bearer token]';
      }
      return { ...body, metadata: { ...(body.metadata ?? {}), creationTimestamp: null }, status };
    },
  };
}
