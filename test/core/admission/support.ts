/** What the admission tests share: targets by resource, and the refusal a write ends in. */
export { statusOf as refusal } from '../../support/status';

/** A target of `resource` (core group unless `group`), in `namespace`, naming `name`. */
export const at = (resource: string, namespace?: string, name?: string, group = '') => ({
  group,
  version: 'v1',
  resource,
  ...(namespace ? { namespace } : {}),
  ...(name ? { name } : {}),
});
