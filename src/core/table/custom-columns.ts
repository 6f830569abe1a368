/**
 * The Table of a custom resource, as apiextensions-apiserver's tableconvertor builds it from a
 * CRD version's `additionalPrinterColumns` (k8s 1.32):
 * - `Name` first (type string, format name, ObjectMeta's name description), then each printer
 *   column with its name, type, format, priority, and its description or
 *   `Custom resource definition column (in JSONPath format): <jsonPath>`;
 * - each column's jsonPath is parsed once (wrapped in `{}`, missing keys allowed); a cell is the
 *   first value of the first result (a path matching several values shows the first only, as
 *   upstream's tests pin), null when there is none or evaluation fails;
 * - `string` cells print any value (maps and slices as JSON, a JSON null as `<no value>`);
 *   `integer` takes numbers (truncated), `number` numbers, `boolean` booleans, `date` strings
 *   (the age since the RFC 3339 time; `<unknown>` for an empty or zero time, `<invalid>` for
 *   one that does not parse); anything else, or another type's value, is null;
 * - a version without columns is served `Age` (`.metadata.creationTimestamp`, date), as
 *   upstream's getColumnsForVersion / serveDefaultColumnsIfEmpty do.
 * A column whose jsonPath does not parse ends the columns there: upstream serves the columns
 * before it and logs the error (`error` here); the CRD's validation only checks the leading `.`.
 */
import type { ApiObject } from '../api';
import { humanDuration, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION } from './format';
import { type JsonPath, parseJsonPath, printJsonPathValue } from './jsonpath';
import { column, type TableCell, type TableColumnDefinition, type TableDefinition } from './types';

/** apiextensions/v1 CustomResourceColumnDefinition. */
export interface PrinterColumn {
  name: string;
  /** `integer`, `number`, `string`, `boolean` or `date` (the CRD's validation holds it to those). */
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** What a version without `additionalPrinterColumns` is served. */
export const DEFAULT_PRINTER_COLUMNS: readonly PrinterColumn[] = Object.freeze([
  Object.freeze({ name: 'Age', type: 'date', description: OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' }),
]);

/** upstream's serveDefaultColumnsIfEmpty: the version's columns, or `Age` when it has none. */
export function printerColumnsForVersion(columns: readonly PrinterColumn[] | null | undefined): readonly PrinterColumn[] {
  return columns && columns.length > 0 ? columns : DEFAULT_PRINTER_COLUMNS;
}

/** upstream's getScaleColumnsForVersion: the `/scale` Table's columns (of the Scale object). */
export function scalePrinterColumns(scale: { specReplicasPath?: string; statusReplicasPath?: string } | null | undefined): PrinterColumn[] {
  const columns: PrinterColumn[] = [];
  if (scale?.specReplicasPath) columns.push({ name: 'Desired', type: 'integer', description: 'Number of desired replicas', jsonPath: '.spec.replicas' });
  if (scale?.statusReplicasPath) columns.push({ name: 'Available', type: 'integer', description: 'Number of actual replicas', jsonPath: '.status.replicas' });
  columns.push(...DEFAULT_PRINTER_COLUMNS);
  return columns;
}

/** A custom resource's table; `error` when a column's jsonPath did not parse (the columns stop before it). */
export interface CustomResourceTableDefinition extends TableDefinition<ApiObject> {
  readonly error?: string;
}

const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:Z|([+-])(\d{2}):(\d{2}))$/;
/** time.Time{} (0001-01-01T00:00:00Z), which metav1.Time.IsZero reports. */
const ZERO_TIME_MS = -62135596800000;

function daysIn(month: number, year: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * time.Parse(time.RFC3339, text) in milliseconds since the epoch, or undefined. Go's fallback
 * parser is lenient where its fast path is not: a one-digit hour, a comma before the fraction,
 * any number of fraction digits, zone offsets up to 24:60. `T` and `Z` are upper case.
 */
function parseGoRfc3339(text: string): { ms: number; zero: boolean } | undefined {
  const m = TIME.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 24 || om > 60) return undefined;
    offsetMinutes = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const whole = date.getTime() - offsetMinutes * 60_000;
  const nanos = m[7] ? Number(m[7].slice(0, 9).padEnd(9, '0')) : 0;
  return { ms: whole + nanos / 1e6, zero: whole === ZERO_TIME_MS && nanos === 0 };
}

/** A `date` cell: metav1.Time.UnmarshalQueryParameter, then ConvertToHumanReadableDateType. */
function dateCell(text: string, now: number): string {
  if (text === '' || text === 'null') return '<unknown>';
  const t = parseGoRfc3339(text);
  if (!t) return '<invalid>';
  return t.zero ? '<unknown>' : humanDuration(now - t.ms);
}

/** upstream's cellForJSONValue: a non-string column's cell from the value found. */
export function printerColumnCell(type: string, value: unknown, now: number): TableCell {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) || 0 : null;
    case 'number':
      return typeof value === 'number' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'string':
      return typeof value === 'string' ? value : null;
    case 'date':
      return typeof value === 'string' ? dateCell(value, now) : null;
  }
  return null;
}

function nameOf(obj: ApiObject): string {
  const name = (obj.metadata as { name?: unknown } | undefined)?.name;
  return typeof name === 'string' ? name : '';
}

/**
 * The table of a CRD version from its `additionalPrinterColumns` (upstream's tableconvertor.New
 * over the columns getColumnsForVersion serves). Parse each jsonPath once here; rows only evaluate.
 */
export function customResourceTable(printerColumns: readonly PrinterColumn[] | null | undefined): CustomResourceTableDefinition {
  const columns: TableColumnDefinition[] = [column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' })];
  const paths: JsonPath[] = [];
  const types: string[] = [];
  let error: string | undefined;
  for (const col of printerColumnsForVersion(printerColumns)) {
    let path: JsonPath;
    try {
      path = parseJsonPath(col.jsonPath, { allowMissingKeys: true });
    } catch {
      error = `unrecognized column definition ${JSON.stringify(col.jsonPath)}`;
      break;
    }
    paths.push(path);
    types.push(col.type);
    columns.push({
      name: col.name,
      type: col.type,
      format: col.format ?? '',
      description: col.description || `Custom resource definition column (in JSONPath format): ${col.jsonPath}`,
      priority: col.priority ?? 0,
    });
  }
  const n = paths.length;
  return {
    columns,
    ...(error ? { error } : {}),
    row(obj, { now }) {
      const cells: TableCell[] = new Array(n + 1);
      cells[0] = nameOf(obj);
      for (let i = 0; i < n; i++) {
        const value = paths[i]!.firstResult(obj);
        if (value === undefined) cells[i + 1] = null;
        else if (types[i] === 'string') cells[i + 1] = printJsonPathValue(value);
        else cells[i + 1] = printerColumnCell(types[i]!, value, now);
      }
      return { cells };
    },
  };
}
