/**
 * The patch types and their media types, in upstream's order (its 415 message lists them so).
 * The gateway maps a PATCH's Content-Type with it, OpenAPI lists it, and a strategic merge patch
 * of a type without a schema answers 415 from it.
 */
import type { PatchType } from '../api';

export const PATCH_MEDIA_TYPES: ReadonlyMap<string, PatchType> = new Map<string, PatchType>([
  ['application/json-patch+json', 'json'],
  ['application/merge-patch+json', 'merge'],
  ['application/strategic-merge-patch+json', 'strategic'],
  ['application/apply-patch+yaml', 'apply'],
]);
