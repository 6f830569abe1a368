/** metav1.Table: per-type definitions, upstream's default columns, and the PartialObjectMetadata forms. */
export * from './types';
export {
  OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION,
  OBJECT_META_NAME_DESCRIPTION,
  formatLabelSelector,
  humanDuration,
  layoutContainerCells,
  since,
  subjectsStrings,
} from './format';
export { DEFAULT_TABLE, asPartialObjectMetadata, asPartialObjectMetadataList, buildTable, isList, type BuildTableOptions } from './build';
export { podCells, type PodCells, type PrintablePod } from './pod-status';
export {
  JsonPathError,
  parseJsonPath,
  parseJsonPathTemplate,
  relaxedJsonPathExpression,
  selectableField,
  selectableFieldValue,
  type JsonPath,
  type JsonPathOptions,
  type SelectableField,
} from './jsonpath';
export {
  DEFAULT_PRINTER_COLUMNS,
  customResourceTable,
  printerColumnCell,
  printerColumnsForVersion,
  scalePrinterColumns,
  type CustomResourceTableDefinition,
  type PrinterColumn,
} from './custom-columns';
