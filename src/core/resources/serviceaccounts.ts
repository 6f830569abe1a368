/**
 * core/v1 ServiceAccount: a name (DNS subdomain) in a namespace, plus the secrets and image pull
 * secrets it lists. Upstream validates nothing beyond metadata.
 */
import type { ApiObject } from '../api';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface ServiceAccount extends ApiObject {
  secrets?: Array<{ name?: string; namespace?: string; [field: string]: unknown }>;
  imagePullSecrets?: Array<{ name?: string }>;
  automountServiceAccountToken?: boolean;
}

export const defineServiceAccounts: DefineResource = () =>
  defineTyped<ServiceAccount>({
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    resource: 'serviceaccounts',
    singular: 'serviceaccount',
    namespaced: true,
    shortNames: ['sa'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
  });
