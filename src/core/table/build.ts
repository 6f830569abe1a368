/**
 * Objects and lists as metav1.Table (docs/API.md, "Content negotiation" 5), as upstream's TableConvertor
 * and asTable build them: the type's definition gives columns and cells, or upstream's default
 * (`Name`, `Created At`) for types without one; list metadata (resourceVersion, continue,
 * remainingItemCount) or the object's resourceVersion rides on the Table; each row carries the
 * object as `includeObject` asks. Also the PartialObjectMetadata(List) forms.
 */
import type { ApiList, ApiObject, ObjectMeta } from '../api';
import { OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION } from './format';
import { type IncludeObject, type Table, type TableContext, type TableDefinition, type TableListMeta, type TableRow, column } from './types';

/** upstream's default table convertor: for types without printers (Roles, ClusterRoles). */
export const DEFAULT_TABLE: TableDefinition<ApiObject> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('Created At', 'date', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (obj) => ({ cells: [obj.metadata?.name ?? '', createdAt(obj.metadata?.creationTimestamp)] }),
};

/** `creationTimestamp.Time.UTC().Format(time.RFC3339)`; the zero time when unset. */
function createdAt(timestamp: string | null | undefined): string {
  const t = typeof timestamp === 'string' ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(t)) return '0001-01-01T00:00:00Z';
  return new Date(Math.floor(t / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export interface BuildTableOptions {
  /** `meta.<vendor>/v1` or `.../v1beta1`: the Table's and the row metadata objects' apiVersion. */
  metaApiVersion: string;
  /** The served type's apiVersion and kind, which list items lack (for `includeObject=Object`). */
  apiVersion: string;
  kind: string;
  includeObject?: IncludeObject | '';
  /** Leave out the column definitions (every watch event after the first). */
  noHeaders?: boolean;
  ctx: TableContext;
}

export function isList(value: unknown): value is ApiList {
  return typeof value === 'object' && value !== null && Array.isArray((value as { items?: unknown }).items);
}

/** metav1.PartialObjectMetadata of an object: its whole ObjectMeta. */
export function asPartialObjectMetadata(obj: ApiObject, metaApiVersion: string): ApiObject {
  return { kind: 'PartialObjectMetadata', apiVersion: metaApiVersion, metadata: (obj.metadata ?? {}) as ObjectMeta };
}

function listMeta(meta: TableListMeta | undefined): TableListMeta {
  const out: TableListMeta = {};
  if (meta?.resourceVersion) out.resourceVersion = meta.resourceVersion;
  if (meta?.continue) out.continue = meta.continue;
  if (meta?.remainingItemCount !== undefined && meta.remainingItemCount !== null) out.remainingItemCount = meta.remainingItemCount;
  return out;
}

/** metav1.PartialObjectMetadataList of a list; `items` is null when empty, as upstream appends to a nil slice. */
export function asPartialObjectMetadataList(list: ApiList, metaApiVersion: string): ApiObject {
  return {
    kind: 'PartialObjectMetadataList',
    apiVersion: metaApiVersion,
    metadata: listMeta(list.metadata) as ObjectMeta,
    items: list.items.length ? list.items.map((item) => asPartialObjectMetadata(item, metaApiVersion)) : null,
  };
}

function rowObject(obj: ApiObject, options: BuildTableOptions): unknown {
  switch (options.includeObject || 'Metadata') {
    case 'None':
      return null;
    case 'Object':
      return obj.kind ? obj : { kind: options.kind, apiVersion: options.apiVersion, ...obj };
    default:
      return asPartialObjectMetadata(obj, options.metaApiVersion);
  }
}

/**
 * A Table of one object or a list. With `definition` undefined, upstream's default convertor:
 * its rows are null for an empty list (it appends to a nil slice), where printers give `[]`.
 */
export function buildTable<T extends ApiObject>(value: T | ApiList<T>, definition: TableDefinition<T> | undefined, options: BuildTableOptions): Table {
  const def = (definition ?? DEFAULT_TABLE) as TableDefinition<T>;
  const items = isList(value) ? (def.order ? def.order(value.items as T[]) : (value.items as T[])) : [value];
  const rows: TableRow[] = items.map((item) => {
    const data = def.row(item, options.ctx);
    const row: TableRow = { cells: data.cells, object: rowObject(item, options) };
    if (data.conditions?.length) row.conditions = data.conditions;
    return row;
  });
  const metadata = isList(value) ? listMeta(value.metadata) : listMeta({ resourceVersion: value.metadata?.resourceVersion });
  return {
    kind: 'Table',
    apiVersion: options.metaApiVersion,
    metadata,
    columnDefinitions: options.noHeaders ? null : [...def.columns],
    rows: !definition && rows.length === 0 ? null : rows,
  };
}
