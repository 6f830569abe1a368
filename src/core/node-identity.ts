/** Who is a kubelet: user `system:node:<name>` in group `system:nodes` (upstream's NodeIdentity). */
import type { UserInfo } from './api';

export const NODES_GROUP = 'system:nodes';
const NODE_USER_PREFIX = 'system:node:';

/** The node's name, '' for a node user without one, undefined for anyone else. */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}
