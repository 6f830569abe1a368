/** Upstream's well-known users and groups of authentication. */
import type { UserInfo } from '../core';

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';

export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}

/**
 * Every authenticated user is also in `system:authenticated` (upstream's group adder), except
 * the anonymous user and a user that already claims it.
 */
export function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.username === ANONYMOUS_USER || user.groups.includes(AUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}
