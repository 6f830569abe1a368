/**
 * coordination/v1 Lease: a holder and a renew time, for node heartbeats and leader election
 * (upstream's Lease strategy and ValidateLease). `strategy` and `preferredHolder`
 * belong to the CoordinatedLeaderElection gate (alpha, off in 1.32) and are dropped.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

export interface Lease extends ApiObject {
  spec?: LeaseSpec;
}

const SPEC = FieldPath.root('spec');

export function validateLeaseSpec(spec: LeaseSpec): FieldError[] {
  const errs: FieldError[] = [];
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0) {
    errs.push(fieldErrors.invalid(SPEC.child('leaseDurationSeconds'), spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0) {
    errs.push(fieldErrors.invalid(SPEC.child('leaseTransitions'), spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** The gate-guarded fields are dropped unless the stored object already uses them (upstream dropDisabledFields). */
function dropDisabledFields(lease: Lease, old?: Lease): void {
  if (!lease.spec) return;
  if (!old?.spec?.strategy) delete lease.spec.strategy;
  if (!old?.spec?.preferredHolder) delete lease.spec.preferredHolder;
}

const LEASE_TABLE: TableDefinition<Lease> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Holder',
      'string',
      'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (lease, { now }) => ({ cells: [lease.metadata?.name ?? '', lease.spec?.holderIdentity ?? '', since(lease.metadata?.creationTimestamp, now)] }),
};

export const defineLeases: DefineResource = (naming) =>
  defineTyped<Lease>({
    group: naming.groups.coordination,
    version: 'v1',
    kind: 'Lease',
    resource: 'leases',
    singular: 'lease',
    namespaced: true,
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: false,
    prepareForCreate: (lease) => dropDisabledFields(lease),
    prepareForUpdate: (lease, old) => dropDisabledFields(lease, old),
    validate: (lease) => validateLeaseSpec(lease.spec ?? {}),
    table: LEASE_TABLE,
  });
