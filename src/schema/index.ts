/** The one definition of every type Keelson serves (DESIGN.md "One source for every fact about a type"). */
export * from './types';
export * from './registry';
export { RESOURCE_KINDS, UNVERSIONED_META_KINDS, META_GROUP_KINDS, PER_GROUP_VERSION_KINDS } from './kinds';
export { effectiveListMapKeys, effectiveListType, effectiveMapType, effectiveStructType } from './markers';
