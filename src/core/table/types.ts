/**
 * metav1.Table and the per-type table definitions the resource modules declare (a type's
 * columns live in its own module, not in one file for every type as upstream's printers do).
 * A definition gives every column upstream's printer defines, wide ones (`priority: 1`)
 * included, and a row function producing one cell per column: upstream's server always prints wide and lets clients hide columns.
 */

/** metav1.TableColumnDefinition; every field is written, empty or not. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export type TableCell = string | number | boolean | null;

/** metav1.TableRowCondition (pods that completed carry `Completed`). */
export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** What a row function returns: the cells, and conditions when the row has any. */
export interface TableRowData {
  cells: TableCell[];
  conditions?: TableRowCondition[];
}

export interface TableContext {
  /** Milliseconds since the epoch from the injected clock: AGE and the other "since" cells. */
  now: number;
}

export interface TableDefinition<T = never> {
  readonly columns: readonly TableColumnDefinition[];
  row(obj: T, ctx: TableContext): TableRowData;
  /** A list's rows in the order upstream's printer sorts them (absent: the list's own order). */
  order?(items: readonly T[]): T[];
}

/** metav1.TableRow: `object` is null with `includeObject=None`. */
export interface TableRow {
  cells: TableCell[];
  conditions?: TableRowCondition[];
  object: unknown;
}

export interface TableListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

/** metav1.Table (`meta.<vendor>/v1` or `v1beta1`); null column definitions when headers are off. */
export interface Table {
  kind: 'Table';
  apiVersion: string;
  metadata: TableListMeta;
  columnDefinitions: TableColumnDefinition[] | null;
  rows: TableRow[] | null;
}

/** `includeObject`: what each row carries (upstream's default for an empty value is Metadata). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** A column as upstream's printers declare it: `format` and `priority` default to empty and 0. */
export function column(name: string, type: string, description: string, extra: { format?: string; priority?: number } = {}): TableColumnDefinition {
  return { name, type, format: extra.format ?? '', description, priority: extra.priority ?? 0 };
}
