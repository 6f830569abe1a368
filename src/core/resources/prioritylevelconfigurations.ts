/**
 * flowcontrol.apiserver PriorityLevelConfiguration, v1 (stored) and v1beta3 (upstream's
 * strategy and ValidatePriorityLevelConfiguration): a level is Exempt (never limited) or Limited
 * (its share of the server's concurrency, what it lends and may borrow, and whether requests
 * beyond it queue or are rejected). Cluster-scoped, with `/status`; spec changes count in the
 * generation. The mandatory `catch-all` level's spec cannot change, nor `exempt`'s beyond its
 * `exempt` section.
 *
 * The versions differ in `limited.nominalConcurrencyShares`: v1's is a pointer, defaulted to 30
 * only when unspecified; v1beta3's a plain integer, whose 0 upstream defaults to 30 unless the
 * object carries the round-trip annotation (`<flowcontrol group domain>/v1beta3-preserve-zero-
 * concurrency-shares`), which the conversion from v1 adds for an explicit 0 and the conversion to
 * v1 drops.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { deepCopy } from '../../util/json-values';
import { defineTyped } from './common';
import type { DefineResource, EquivalentVersion, ResourceDefinition } from './definition';
import { flowControlBootstrap, mandatoryObject } from './flowcontrol-bootstrap';
import { flowControlStrategy, validateConditions } from './flowschemas';
import {
  type ExemptPriorityLevelConfiguration,
  type LimitedPriorityLevelConfiguration,
  type LimitResponse,
  PRIORITY_LEVEL_EXEMPT,
  type PriorityLevelConfiguration,
  type PriorityLevelConfigurationSpec,
  type QueuingConfiguration,
} from './flowcontrol-types';

/** Upstream's PriorityLevelConfigurationDefaultNominalConcurrencyShares and queuing defaults. */
export const DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30;
export const DEFAULT_QUEUES = 64;
export const DEFAULT_HAND_SIZE = 8;
export const DEFAULT_QUEUE_LENGTH_LIMIT = 50;

/** Upstream's priorityLevelConfigurationQueuingMaxQueues (10^7). */
const MAX_QUEUES = 10_000_000;
/** Upstream's shufflesharding.MaxHashBits: the bits of the 64-bit hash a hand is dealt from. */
const MAX_HASH_BITS = 60;
const ENABLEMENTS = ['Exempt', 'Limited'];
const LIMIT_RESPONSE_TYPES = ['Queue', 'Reject'];

/** Upstream's shufflesharding.RequiredEntropyBits: ceil(log2(deckSize^handSize)). */
export function requiredEntropyBits(deckSize: number, handSize: number): number {
  return Math.ceil(Math.log2(deckSize) * handSize);
}

function defaultQueuing(q: QueuingConfiguration): void {
  if (!q.handSize) q.handSize = DEFAULT_HAND_SIZE;
  if (!q.queues) q.queues = DEFAULT_QUEUES;
  if (!q.queueLengthLimit) q.queueLengthLimit = DEFAULT_QUEUE_LENGTH_LIMIT;
}

function defaultExempt(exempt: ExemptPriorityLevelConfiguration): void {
  exempt.nominalConcurrencyShares ??= 0;
  exempt.lendablePercent ??= 0;
}

/** What both versions default alike; `shares` defaults `limited.nominalConcurrencyShares` the version's way. */
function defaultSpec(pl: PriorityLevelConfiguration, shares: (limited: LimitedPriorityLevelConfiguration) => void): void {
  pl.spec ??= { type: '' as PriorityLevelConfigurationSpec['type'] };
  const { limited, exempt } = pl.spec;
  if (limited) {
    shares(limited);
    limited.lendablePercent ??= 0;
    limited.limitResponse ??= { type: '' as LimitResponse['type'] };
    if (limited.limitResponse.queuing) defaultQueuing(limited.limitResponse.queuing);
  }
  if (exempt) defaultExempt(exempt);
}

/** Upstream's v1 defaults: unspecified shares are 30, an explicit 0 stays 0. */
export function defaultPriorityLevelV1(pl: PriorityLevelConfiguration): void {
  defaultSpec(pl, (limited) => {
    if (limited.nominalConcurrencyShares == null) limited.nominalConcurrencyShares = DEFAULT_NOMINAL_CONCURRENCY_SHARES;
  });
}

/** Upstream's v1beta3 defaults: a 0 is 30 unless the round-trip annotation says the 0 was meant. */
export function defaultPriorityLevelV1beta3(pl: PriorityLevelConfiguration, naming: Naming): void {
  const preserveZero = pl.metadata?.annotations?.[naming.labels.apfPreserveZeroShares] !== undefined;
  defaultSpec(pl, (limited) => {
    if (!limited.nominalConcurrencyShares && !preserveZero) limited.nominalConcurrencyShares = DEFAULT_NOMINAL_CONCURRENCY_SHARES;
    limited.nominalConcurrencyShares ??= 0;
  });
}

function validateQueuing(q: QueuingConfiguration, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const queues = q.queues ?? 0;
  const handSize = q.handSize ?? 0;
  const queueLengthLimit = q.queueLengthLimit ?? 0;
  if (queueLengthLimit <= 0) errs.push(fieldErrors.invalid(path.child('queueLengthLimit'), queueLengthLimit, 'must be positive'));
  if (queues <= 0) errs.push(fieldErrors.invalid(path.child('queues'), queues, 'must be positive'));
  else if (queues > MAX_QUEUES) errs.push(fieldErrors.invalid(path.child('queues'), queues, `must not be greater than ${MAX_QUEUES}`));
  const handPath = path.child('handSize');
  if (handSize <= 0) errs.push(fieldErrors.invalid(handPath, handSize, 'must be positive'));
  else if (handSize > queues) errs.push(fieldErrors.invalid(handPath, handSize, `should not be greater than queues (${queues})`));
  else if (requiredEntropyBits(queues, handSize) > MAX_HASH_BITS)
    errs.push(
      fieldErrors.invalid(
        handPath,
        handSize,
        `required entropy bits of deckSize ${queues} and handSize ${handSize} should not be greater than ${MAX_HASH_BITS}`,
      ),
    );
  return errs;
}

function validateLimitResponse(lr: LimitResponse | undefined, path: FieldPath): FieldError[] {
  const type = lr?.type ?? '';
  switch (type) {
    case 'Reject':
      return lr?.queuing != null ? [fieldErrors.forbidden(path.child('queuing'), 'must be nil if limited.limitResponse.type is not Limited')] : [];
    case 'Queue':
      return lr?.queuing == null
        ? [fieldErrors.required(path.child('queuing'), 'must not be empty if limited.limitResponse.type is Limited')]
        : validateQueuing(lr.queuing, path.child('queuing'));
    default:
      return [fieldErrors.notSupported(path.child('type'), type, LIMIT_RESPONSE_TYPES)];
  }
}

function validatePercent(value: number | undefined, path: FieldPath): FieldError[] {
  return value != null && !(value >= 0 && value <= 100) ? [fieldErrors.invalid(path, value, 'must be between 0 and 100, inclusive')] : [];
}

function validateLimited(limited: LimitedPriorityLevelConfiguration, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const shares = limited.nominalConcurrencyShares ?? 0;
  if (shares < 0) errs.push(fieldErrors.invalid(path.child('nominalConcurrencyShares'), shares, 'must be a non-negative integer'));
  errs.push(...validateLimitResponse(limited.limitResponse, path.child('limitResponse')));
  errs.push(...validatePercent(limited.lendablePercent, path.child('lendablePercent')));
  if (limited.borrowingLimitPercent != null && limited.borrowingLimitPercent < 0)
    errs.push(fieldErrors.invalid(path.child('borrowingLimitPercent'), limited.borrowingLimitPercent, 'if specified, must be a non-negative integer'));
  return errs;
}

/** Upstream's ValidatePriorityLevelConfigurationSpec. */
function validateSpec(spec: PriorityLevelConfigurationSpec, name: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const type = spec.type ?? '';
  if ((name === PRIORITY_LEVEL_EXEMPT) !== (type === 'Exempt'))
    errs.push(fieldErrors.invalid(path.child('type'), type, "type must be 'Exempt' if and only if name is 'exempt'"));
  switch (type) {
    case 'Exempt':
      if (spec.limited != null) errs.push(fieldErrors.forbidden(path.child('limited'), 'must be nil if the type is not Limited'));
      if (spec.exempt != null) {
        const exemptPath = path.child('exempt');
        const shares = spec.exempt.nominalConcurrencyShares;
        if (shares != null && shares < 0)
          errs.push(fieldErrors.invalid(exemptPath.child('nominalConcurrencyShares'), shares, 'must be a non-negative integer'));
        errs.push(...validatePercent(spec.exempt.lendablePercent, exemptPath.child('lendablePercent')));
      }
      break;
    case 'Limited':
      if (spec.exempt != null) errs.push(fieldErrors.forbidden(path.child('exempt'), 'must be nil if the type is Limited'));
      if (spec.limited == null) errs.push(fieldErrors.required(path.child('limited'), 'must not be empty when type is Limited'));
      else errs.push(...validateLimited(spec.limited, path.child('limited')));
      break;
    default:
      errs.push(fieldErrors.notSupported(path.child('type'), type, ENABLEMENTS));
  }
  return errs;
}

/**
 * Upstream's ValidateIfMandatoryPriorityLevelConfigurationObject: `catch-all`'s spec is fixed;
 * `exempt`'s too but for its `exempt` section, which an administrator may tune.
 */
function validateMandatory(pl: PriorityLevelConfiguration, spec: PriorityLevelConfigurationSpec, naming: Naming, path: FieldPath): FieldError[] {
  const name = pl.metadata?.name ?? '';
  const mandatory = mandatoryObject(flowControlBootstrap(naming).priorityLevels, name);
  if (!mandatory) return [];
  if (name === PRIORITY_LEVEL_EXEMPT) {
    return semanticEqual({ ...spec, exempt: mandatory.spec!.exempt }, mandatory.spec)
      ? []
      : [fieldErrors.invalid(path, spec, `spec of '${name}' except the 'spec.exempt' field must equal the fixed value`)];
  }
  return semanticEqual(spec, mandatory.spec) ? [] : [fieldErrors.invalid(path, spec, `spec of '${name}' must equal the fixed value`)];
}

/** Upstream's ValidatePriorityLevelConfiguration (metadata is checked by the registry). */
export function validatePriorityLevelConfiguration(pl: PriorityLevelConfiguration, naming: Naming): FieldError[] {
  const path = FieldPath.root('spec');
  const spec = pl.spec ?? ({ type: '' } as unknown as PriorityLevelConfigurationSpec);
  return [...validateSpec(spec, pl.metadata?.name ?? '', path), ...validateMandatory(pl, spec, naming, path), ...validateConditions(pl.status)];
}

const PRIORITY_LEVEL_TABLE: TableDefinition<PriorityLevelConfiguration> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Type',
      'string',
      '`type` indicates whether this priority level is subject to limitation on request execution.  A value of `"Exempt"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `"Limited"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server\'s limited capacity is made available exclusively to this priority level. Required.',
    ),
    column(
      'NominalConcurrencyShares',
      'string',
      '`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level.',
    ),
    column('Queues', 'string', '`queues` is the number of queues for this priority level.'),
    column('HandSize', 'string', '`handSize` is a small positive number that configures the shuffle sharding of requests into queues.'),
    column(
      'QueueLengthLimit',
      'string',
      '`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  // Upstream's printPriorityLevelConfiguration: `<none>` where the level has no limits or no queues.
  row: (pl, { now }) => {
    const limited = pl.spec?.limited;
    const queuing = limited?.limitResponse?.queuing;
    return {
      cells: [
        pl.metadata?.name ?? '',
        pl.spec?.type ?? '',
        limited ? (limited.nominalConcurrencyShares ?? '<none>') : '<none>',
        queuing ? (queuing.queues ?? 0) : '<none>',
        queuing ? (queuing.handSize ?? 0) : '<none>',
        queuing ? (queuing.queueLengthLimit ?? 0) : '<none>',
        since(pl.metadata?.creationTimestamp, now),
      ],
    };
  },
};

/** A new object in `apiVersion` (when the object names one), its annotations changed by `annotate`. */
function converted(obj: ApiObject, apiVersion: string, annotate: (annotations: Record<string, string>, pl: PriorityLevelConfiguration) => void): ApiObject {
  const copy = deepCopy(obj) as PriorityLevelConfiguration;
  if (copy.apiVersion) copy.apiVersion = apiVersion;
  const annotations = { ...(copy.metadata?.annotations ?? {}) };
  annotate(annotations, copy);
  if (copy.metadata) {
    if (Object.keys(annotations).length > 0) copy.metadata.annotations = annotations;
    else delete copy.metadata.annotations;
  }
  return copy;
}

/** v1 ↔ v1beta3 as upstream converts them: an explicit zero share travels to v1beta3 as the round-trip annotation. */
function conversions(naming: Naming): { toV1: (obj: ApiObject) => ApiObject; toV1beta3: (obj: ApiObject) => ApiObject } {
  const group = naming.groups.flowcontrol;
  const key = naming.labels.apfPreserveZeroShares;
  return {
    toV1: (obj) =>
      converted(obj, `${group}/v1`, (annotations) => {
        delete annotations[key];
      }),
    toV1beta3: (obj) =>
      converted(obj, `${group}/v1beta3`, (annotations, pl) => {
        const limited = pl.spec?.limited;
        if (limited && !limited.nominalConcurrencyShares) {
          limited.nominalConcurrencyShares = 0;
          annotations[key] ??= '';
        }
      }),
  };
}

function definePriorityLevelsIn(naming: Naming, version: 'v1' | 'v1beta3'): ResourceDefinition {
  const group = naming.groups.flowcontrol;
  const { toV1, toV1beta3 } = conversions(naming);
  const other: EquivalentVersion =
    version === 'v1'
      ? { apiVersion: `${group}/v1beta3`, fieldNames: {}, toThat: toV1beta3, fromThat: toV1 }
      : { apiVersion: `${group}/v1`, fieldNames: {}, toThat: toV1, fromThat: toV1beta3 };
  return defineTyped<PriorityLevelConfiguration>({
    group,
    version,
    kind: 'PriorityLevelConfiguration',
    resource: 'prioritylevelconfigurations',
    singular: 'prioritylevelconfiguration',
    ...flowControlStrategy<PriorityLevelConfiguration>(group, version, 'PriorityLevelConfiguration', other),
    defaults: version === 'v1' ? defaultPriorityLevelV1 : (pl) => defaultPriorityLevelV1beta3(pl, naming),
    // Validated as stored (v1), as upstream validates the internal object: a v1beta3 write's round-trip annotation is gone by then.
    validate: (pl) => validatePriorityLevelConfiguration((version === 'v1' ? pl : toV1(pl)) as PriorityLevelConfiguration, naming),
    table: PRIORITY_LEVEL_TABLE,
  });
}

export const definePriorityLevelConfigurations: DefineResource = (naming) => definePriorityLevelsIn(naming, 'v1');
export const definePriorityLevelConfigurationsV1beta3: DefineResource = (naming) => definePriorityLevelsIn(naming, 'v1beta3');
