/**
 * DeleteOptions for DELETE and deletecollection: from the request body when there is one
 * (JSON or YAML, `kind: DeleteOptions`), otherwise from the DELETE query parameters, as
 * upstream's delete handlers do; then upstream's ValidateDeleteOptions (422).
 * docs/API.md, "Object deletion".
 */
import { type DeleteOptions, type Preconditions, type PropagationPolicy, type FieldError, fieldErrors } from '../../core';
import type { Naming } from '../../naming';
import { badRequest, invalid } from '../../status';
import { validateDryRun } from './write-options';
import { queryInt64, queryList, queryOptionalBool, queryString } from './query';

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'];

type GoType = 'int64' | 'bool' | 'string' | '[]string' | 'v1.Preconditions';

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return `number ${value}`;
  return typeof value === 'object' ? 'object' : typeof value;
}

/** Go's encoding/json type mismatch message, which upstream returns as a 400. */
function typeError(field: string, value: unknown, goType: GoType): never {
  throw badRequest(`json: cannot unmarshal ${jsonKind(value)} into Go struct field DeleteOptions.${field} of type ${goType}`);
}

function field<T>(body: Record<string, unknown>, name: string, goType: GoType, check: (v: unknown) => v is T): T | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (!check(v)) typeError(name, v, goType);
  return v;
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);
const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isString);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface RawDeleteOptions {
  dryRun?: string[];
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/** Decode a DeleteOptions body that the body codec already turned into a value. */
export function deleteOptionsFromBody(body: unknown): RawDeleteOptions {
  if (!isObject(body)) throw badRequest(`json: cannot unmarshal ${jsonKind(body)} into Go value of type v1.DeleteOptions`);
  const raw: RawDeleteOptions = {
    dryRun: field(body, 'dryRun', '[]string', isStringList),
    gracePeriodSeconds: field(body, 'gracePeriodSeconds', 'int64', isInt),
    propagationPolicy: field(body, 'propagationPolicy', 'string', isString),
    orphanDependents: field(body, 'orphanDependents', 'bool', isBool),
    ignoreStoreReadErrorWithClusterBreakingPotential: field(body, 'ignoreStoreReadErrorWithClusterBreakingPotential', 'bool', isBool),
  };
  const pre = field(body, 'preconditions', 'v1.Preconditions', isObject);
  if (pre) {
    const preconditions: Preconditions = {};
    for (const key of ['uid', 'resourceVersion'] as const) {
      const v = pre[key];
      if (v === undefined || v === null) continue;
      if (!isString(v)) throw badRequest(`json: cannot unmarshal ${jsonKind(v)} into Go struct field Preconditions.preconditions.${key} of type string`);
      preconditions[key] = v;
    }
    raw.preconditions = preconditions;
  }
  return raw;
}

/** Decode the DELETE query parameters (400 on malformed integers). */
export function deleteOptionsFromQuery(query: URLSearchParams): RawDeleteOptions {
  return {
    dryRun: queryList(query, 'dryRun'),
    gracePeriodSeconds: queryInt64(query, 'gracePeriodSeconds'),
    propagationPolicy: queryString(query, 'propagationPolicy'),
    orphanDependents: queryOptionalBool(query, 'orphanDependents'),
    ignoreStoreReadErrorWithClusterBreakingPotential: queryOptionalBool(query, 'ignoreStoreReadErrorWithClusterBreakingPotential'),
  };
}

export function validateDeleteOptions(o: RawDeleteOptions): FieldError[] {
  const errs: FieldError[] = [];
  if (o.orphanDependents !== undefined && o.propagationPolicy !== undefined) {
    errs.push(fieldErrors.invalid('propagationPolicy', o.propagationPolicy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (o.propagationPolicy !== undefined && !PROPAGATION_POLICIES.includes(o.propagationPolicy)) {
    errs.push(fieldErrors.notSupported('propagationPolicy', o.propagationPolicy, [...PROPAGATION_POLICIES, 'nil']));
  }
  errs.push(...validateDryRun(o.dryRun));
  return errs;
}

/**
 * DeleteOptions from a decoded body (when the request had one) or from the query, validated.
 */
export function parseDeleteOptions(body: unknown | undefined, query: URLSearchParams, naming: Naming): DeleteOptions {
  const raw = body === undefined ? deleteOptionsFromQuery(query) : deleteOptionsFromBody(body);
  const errs = validateDeleteOptions(raw);
  if (errs.length) throw invalid({ group: naming.groups.meta, kind: 'DeleteOptions' }, '', errs);
  const options: DeleteOptions = {};
  if (raw.dryRun?.length) options.dryRun = raw.dryRun;
  if (raw.gracePeriodSeconds !== undefined) options.gracePeriodSeconds = raw.gracePeriodSeconds;
  if (raw.preconditions) options.preconditions = raw.preconditions;
  if (raw.propagationPolicy !== undefined) options.propagationPolicy = raw.propagationPolicy as PropagationPolicy;
  if (raw.orphanDependents !== undefined) options.orphanDependents = raw.orphanDependents;
  if (raw.ignoreStoreReadErrorWithClusterBreakingPotential !== undefined) {
    options.ignoreStoreReadErrorWithClusterBreakingPotential = raw.ignoreStoreReadErrorWithClusterBreakingPotential;
  }
  return options;
}
