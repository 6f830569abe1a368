/**
 * core/v1 ServiceAccount: a name (DNS subdomain) in a namespace, plus the secrets and image pull
 * secrets it lists. Upstream validates nothing beyond metadata.
 */
import type { ApiObject } from '../api';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface ServiceAccount extends ApiObject {
  secrets?: Array<{ name?: string; namespace?: string; [field: string]: unknown }>;
  imagePullSecrets?: Array<{ name?: string }>;
  automountServiceAccountToken?: boolean;
}

/** upstream's ServiceAccount printer. */
const SERVICE_ACCOUNT_TABLE: TableDefinition<ServiceAccount> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Secrets',
      'string',
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "{keyDomain}/enforce-mountable-secrets" annotation set to "true". The "{keyDomain}/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://{keyDomain}/docs/concepts/configuration/secret',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (sa, { now }) => ({ cells: [sa.metadata?.name ?? '', (sa.secrets ?? []).length, since(sa.metadata?.creationTimestamp, now)] }),
};

export const defineServiceAccounts: DefineResource = (naming) =>
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
    table: SERVICE_ACCOUNT_TABLE,
    // TokenRequest (`kubectl create token`), answered by the server's token issuer.
    createSubresources: [{ name: 'token', kind: { group: naming.groups.authentication, version: 'v1', kind: 'TokenRequest' } }],
  });
