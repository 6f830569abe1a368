/**
 * A custom resource's `scale` subresource: its replicas and selector read from and written to
 * the paths the definition names (`specReplicasPath`, `statusReplicasPath`,
 * `labelSelectorPath`), and upstream's checks of those paths on every write
 * (customResourceValidator's ValidateScaleSpec and ValidateScaleStatus): an integer from 0 to
 * 2^31-1 where present, a string selector, with unstructured's accessor errors.
 */
import type { ApiObject } from '../api';
import type { ScaleSubresource } from '../resources/definition';
import { type FieldError, fieldErrors } from '../validation/field-errors';
import { type GoKind, goKind, goNumber } from '../validation/schema/go-values';
import type { CrdScale } from './crd';

const MAX_INT32 = 2 ** 31 - 1;

/** A path's fields (`.spec.replicas` → spec, replicas), its leading period ignored as upstream does. */
function fieldsOf(path: string): string[] {
  return (path.startsWith('.') ? path.slice(1) : path).split('.');
}

/** Read a simple JSON path (`.spec.replicas`), as the scale subresource's paths are. */
function readPath(obj: unknown, path: string): unknown {
  let at: unknown = obj;
  for (const part of fieldsOf(path)) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = fieldsOf(path);
  let at = obj;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

/** An integer at a path, 0 when absent (upstream's scale of a custom resource). */
function replicasAt(obj: ApiObject, path: string): number {
  const value = readPath(obj, path);
  return typeof value === 'number' && Number.isInteger(value) ? value : 0;
}

export function scaleOf(paths: CrdScale): ScaleSubresource {
  return {
    specReplicas: (obj) => replicasAt(obj, paths.specReplicasPath),
    setSpecReplicas: (obj, replicas) => writePath(obj as Record<string, unknown>, paths.specReplicasPath, replicas),
    statusReplicas: (obj) => replicasAt(obj, paths.statusReplicasPath),
    selector: (obj) => {
      if (!paths.labelSelectorPath) return '';
      const value = readPath(obj, paths.labelSelectorPath);
      return typeof value === 'string' ? value : '';
    },
  };
}

const GO_TYPES: Record<GoKind, string> = {
  null: '<nil>',
  bool: 'bool',
  string: 'string',
  int: 'int64',
  float: 'float64',
  slice: '[]interface {}',
  map: 'map[string]interface {}',
};

/** Go's `%v` of an unstructured value. */
function goV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return goNumber(v);
  if (typeof v !== 'object') return String(v);
  if (Array.isArray(v)) return `[${v.map(goV).join(' ')}]`;
  const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `map[${entries.map(([k, x]) => `${k}:${goV(x)}`).join(' ')}]`;
}

/** unstructured.NestedFieldNoCopy, then the leaf's type: the value, or the accessor error's text. */
function nested(obj: ApiObject, fields: readonly string[], want: 'int64' | 'string'): { value: unknown } | { error: string } | undefined {
  let at: unknown = obj;
  for (let i = 0; i < fields.length; i++) {
    if (at === null || at === undefined) return undefined;
    if (typeof at !== 'object' || Array.isArray(at)) {
      return {
        error: `.${fields.slice(0, i + 1).join('.')} accessor error: ${goV(at)} is of the type ${GO_TYPES[goKind(at)]}, expected map[string]interface{}`,
      };
    }
    if (!Object.hasOwn(at, fields[i]!)) return undefined;
    at = (at as Record<string, unknown>)[fields[i]!];
  }
  const fits = want === 'string' ? typeof at === 'string' : goKind(at) === 'int';
  return fits ? { value: at } : { error: `.${fields.join('.')} accessor error: ${goV(at)} is of the type ${GO_TYPES[goKind(at)]}, expected ${want}` };
}

/** A replicas path's errors (upstream's checks of specReplicasPath and statusReplicasPath). */
function replicasErrors(obj: ApiObject, path: string): FieldError[] {
  const found = nested(obj, fieldsOf(path), 'int64');
  if (!found) return [];
  if ('error' in found) return [fieldErrors.invalid(path, 0, found.error)];
  const replicas = found.value as number;
  if (replicas < 0) return [fieldErrors.invalid(path, replicas, 'should be a non-negative integer')];
  if (replicas > MAX_INT32) return [fieldErrors.invalid(path, replicas, `should be less than or equal to ${MAX_INT32}`)];
  return [];
}

/**
 * upstream's ValidateScaleSpec (`spec`: on create and update of the main resource) and
 * ValidateScaleStatus (always): the errors are named by the paths as the definition writes them.
 */
export function scaleErrors(obj: ApiObject, paths: CrdScale, { spec }: { spec: boolean }): FieldError[] {
  const errs = spec ? replicasErrors(obj, paths.specReplicasPath) : [];
  errs.push(...replicasErrors(obj, paths.statusReplicasPath));
  if (paths.labelSelectorPath) {
    const found = nested(obj, fieldsOf(paths.labelSelectorPath), 'string');
    if (found && 'error' in found) errs.push(fieldErrors.invalid(paths.labelSelectorPath, '', found.error));
  }
  return errs;
}
