/**
 * Small helpers the type modules share: typed narrowing of the generic definition and the
 * upstream verb lists.
 */
import type { ApiObject } from '../api';
import type { ResourceDefinition, Verb } from './definition';
import { ALL_VERBS } from './definition';

/** Every verb (upstream discovery of most types). */
export const STANDARD_VERBS: readonly Verb[] = ALL_VERBS;

/**
 * Widen a definition written against its own object type to the registry's `ApiObject`
 * one: the registry only hands each definition objects of its own kind.
 */
export function defineTyped<T extends ApiObject>(def: ResourceDefinition<T>): ResourceDefinition {
  return def as unknown as ResourceDefinition;
}
