/** rbac/v1 Role: namespaced rules; no non-resource URLs (docs/API.md, "RBAC kinds"). */
import type { ApiObject } from '../api';
import { defineTyped } from './common';
import type { DefineResource } from './definition';
import { RBAC_VERBS, RBAC_VERSION, validateRules, type PolicyRule } from './rbac-common';

export interface Role extends ApiObject {
  rules?: PolicyRule[];
}

export const defineRoles: DefineResource = (naming) =>
  defineTyped<Role>({
    group: naming.groups.rbac,
    version: RBAC_VERSION,
    kind: 'Role',
    resource: 'roles',
    singular: 'role',
    namespaced: true,
    verbs: RBAC_VERBS,
    nameRule: 'pathSegment',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,

    validate: (role) => validateRules(role.rules, true),
  });
