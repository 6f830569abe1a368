/** The non-apply patch types (docs/API.md, "Patch types"): JSON patch, merge patch, strategic merge patch. */
export { applyJsonPatch, decodeJsonPatch } from './json-patch';
export { applyMergePatch } from './merge-patch';
export { strategicMergePatch } from './strategic';
export { SmpError, rejectedRequest, toStatusError } from './smp-errors';
export { applyPatch } from './apply-patch';
export { PATCH_MEDIA_TYPES } from './media-types';
