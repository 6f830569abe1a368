/** The one definition of every type Keelson serves (each fact written once; protobuf, JSON, validation, patch, apply and OpenAPI derive from it). */
export * from './types';
export * from './registry';
export { UNVERSIONED_META_KINDS, META_GROUP_KINDS, PER_GROUP_VERSION_KINDS } from './kinds';
export { unionFromFields, unionMember, unionToFields } from './unions';
export { effectiveListMapKeys, effectiveListType, effectiveMapType, effectiveStructType } from './markers';
