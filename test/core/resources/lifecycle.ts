/**
 * A stand-in for the generic registry's use of a definition, so type tests exercise the same
 * order of hooks: defaults → prepare → metadata validation → type validation.
 */
import type { ApiObject } from '../../../src/core/api';
import type { ResourceDefinition, StrategyContext } from '../../../src/core/resources/definition';
import { builtinResources } from '../../../src/core/resources';
import { validateObjectMeta, validateObjectMetaUpdate } from '../../../src/core/validation/metadata';
import type { FieldError } from '../../../src/core/validation/field-errors';
import { createNaming, type Vendor } from '../../../src/naming';

export function ctx(vendor: Vendor = 'kubernetes'): StrategyContext {
  return { naming: createNaming(vendor), now: Date.parse('2024-05-01T10:00:00Z') };
}

export function definition(resource: string, vendor: Vendor = 'kubernetes'): ResourceDefinition {
  const def = builtinResources(createNaming(vendor)).find((d) => d.resource === resource);
  if (!def) throw new Error(`no definition for ${resource}`);
  return def;
}

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export interface Outcome<T> {
  object: T;
  errors: FieldError[];
  messages: string[];
}

function outcome<T>(object: ApiObject, errors: FieldError[]): Outcome<T> {
  return { object: object as T, errors, messages: errors.map((e) => e.message) };
}

export function create<T>(def: ResourceDefinition, input: unknown): Outcome<T> {
  const obj = copy(input) as ApiObject;
  const c = ctx();
  def.defaults?.(obj);
  def.prepareForCreate?.(obj, c);
  if (def.tracksGeneration) obj.metadata = { ...obj.metadata, generation: 1 };
  const errors = [
    ...validateObjectMeta(obj.metadata ?? {}, { namespaced: def.namespaced, nameRule: def.nameRule }),
    ...(def.validate?.(obj, c) ?? []),
  ];
  return outcome<T>(obj, errors);
}

/** Create `input`, failing the test on errors, and return the stored form with system metadata. */
export function stored<T>(def: ResourceDefinition, input: unknown): T {
  const { object, messages } = create<ApiObject>(def, input);
  if (messages.length) throw new Error(`unexpected errors: ${messages.join('; ')}`);
  object.metadata = { ...object.metadata, uid: 'uid-1', resourceVersion: '1', creationTimestamp: '2024-05-01T10:00:00Z' };
  return object as T;
}

export function update<T>(def: ResourceDefinition, input: unknown, old: unknown, scope: 'main' | 'status' = 'main'): Outcome<T> {
  const obj = copy(input) as ApiObject;
  const prev = copy(old) as ApiObject;
  const c = ctx();
  obj.metadata = { ...obj.metadata, uid: prev.metadata?.uid, resourceVersion: prev.metadata?.resourceVersion, creationTimestamp: prev.metadata?.creationTimestamp };
  def.defaults?.(obj);
  if (scope === 'status') def.status!.prepareForUpdate(obj, prev, c);
  else def.prepareForUpdate?.(obj, prev, c);
  const errors = [
    ...validateObjectMetaUpdate(obj.metadata ?? {}, prev.metadata ?? {}),
    ...validateObjectMeta(obj.metadata ?? {}, { namespaced: def.namespaced, nameRule: def.nameRule }),
    ...(def.validate?.(obj, c) ?? []),
    ...((scope === 'status' ? def.status!.validateUpdate?.(obj, prev, c) : def.validateUpdate?.(obj, prev, c)) ?? []),
  ];
  return outcome<T>(obj, errors);
}
