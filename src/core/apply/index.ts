/** Server-side apply and field ownership (docs/API.md, "Modifying requests"). */
export { FieldSet } from './set';
export { type Path, type PathElement, fieldElement, pathString, serializeElement } from './fieldpath';
export { type FieldManagerScope, type ApplyResult, applyConfiguration, managedFieldsAfterUpdate } from './field-manager';
export { ManagedFieldsError, decodeManaged, encodeManaged, managerIdentity } from './managed';
export { ApplyConflicts, ApplyValidationError } from './updater';
export { conflictError, printManager, typedPatchError, unknownError } from './errors';
export { SCALE_API_VERSION, type ScaleMapping, parentEntriesFromScale, scaleEntriesFromParent } from './scale';
export { goShape, goShapeStruct } from './normalize';
