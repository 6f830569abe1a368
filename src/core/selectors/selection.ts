/**
 * A request's label and field selectors, parsed and checked against one resource type: what
 * list, watch and deletecollection filter on (docs/API.md, "Reads and resourceVersion"). Bad
 * selectors are 400 BadRequest with upstream's messages.
 */
import type { ApiObject } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import { badRequest } from '../../status';
import { parseLabelSelector, SelectorParseError, type LabelSelector } from './label-selector';
import { makeFieldSelector, parseFieldSelector, type FieldSelector } from './field-selector';

export interface Selection {
  readonly label: LabelSelector;
  readonly field: FieldSelector;
  /** True when neither selector restricts anything. */
  readonly empty: boolean;
  matches(labels: Readonly<Record<string, string>> | undefined, fields: Readonly<Record<string, string>>): boolean;
}

const META_FIELDS = ['metadata.name', 'metadata.namespace'];

/**
 * The field-selector view of an object: `metadata.name`, `metadata.namespace` and the type's own
 * fields (upstream's GetAttrs).
 */
export function selectableFieldsOf(def: ResourceDefinition, obj: ApiObject): Record<string, string> {
  const meta = obj.metadata ?? {};
  const fields: Record<string, string> = { 'metadata.name': meta.name ?? '', 'metadata.namespace': meta.namespace ?? '' };
  return def.selectableFields ? { ...fields, ...def.selectableFields(obj) } : fields;
}

/** The field labels a type can be selected on, and the field each selects: the metadata pair plus its definition's own. */
function knownFields(def: ResourceDefinition): Map<string, string> {
  const own = def.fieldLabels ? Object.entries(def.fieldLabels) : Object.keys(def.selectableFields?.({ metadata: {} }) ?? {}).map((k) => [k, k] as const);
  return new Map([...META_FIELDS.map((k) => [k, k] as const), ...own]);
}

/**
 * Upstream's field label conversion: types that register their own fields answer
 * `field label not supported`; the others use the default conversion's wording.
 */
function unsupportedField(def: ResourceDefinition, field: string): Error {
  if (def.selectableFields || def.fieldLabels) return badRequest(`field label not supported: ${field}`);
  return badRequest(`${JSON.stringify(field)} is not a known field selector: only "metadata.name", "metadata.namespace"`);
}

export function parseSelection(def: ResourceDefinition, labelSelector: string | undefined, fieldSelector: string | undefined): Selection {
  let label: LabelSelector;
  let field: FieldSelector;
  try {
    label = parseLabelSelector(labelSelector ?? '');
    field = parseFieldSelector(fieldSelector ?? '');
  } catch (err) {
    if (err instanceof SelectorParseError) throw badRequest(err.message);
    throw err;
  }
  if (!field.empty) {
    const known = knownFields(def);
    for (const r of field.requirements) if (!known.has(r.field)) throw unsupportedField(def, r.field);
    // A label that names another field selects that one (upstream's field label conversion).
    if (field.requirements.some((r) => known.get(r.field) !== r.field)) {
      field = makeFieldSelector(field.requirements.map((r) => ({ ...r, field: known.get(r.field)! })));
    }
  }
  const empty = label.empty && field.empty;
  return {
    label,
    field,
    empty,
    matches: (labels, fields) => empty || (label.matches(labels) && field.matches(fields)),
  };
}

/** Matches everything; for internal reads that take no selectors. */
export const SELECT_ALL: Selection = {
  label: parseLabelSelector(''),
  field: parseFieldSelector(''),
  empty: true,
  matches: () => true,
};
