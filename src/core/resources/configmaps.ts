/**
 * core/v1 ConfigMap: config keys in `data` and `binaryData` (base64), no key in both, at most
 * 1 MiB together, and the `immutable` flag (upstream ValidateConfigMap / ValidateConfigMapUpdate).
 */
import type { ApiObject } from '../api';
import { byteLength } from '../validation/names';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { base64Size, MAX_SECRET_SIZE, validateBase64Values, validateConfigKeys, validateImmutableData } from './config-data';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface ConfigMap extends ApiObject {
  data?: Record<string, string>;
  /** Values are base64. */
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

const DATA = FieldPath.root('data');
const BINARY_DATA = FieldPath.root('binaryData');

export function validateConfigMap(cm: ConfigMap): FieldError[] {
  const errs: FieldError[] = [];
  const binary = cm.binaryData ?? {};
  let total = 0;
  for (const [key, value] of Object.entries(cm.data ?? {})) {
    errs.push(...validateConfigKeys({ [key]: value }, DATA));
    if (Object.hasOwn(binary, key)) errs.push(fieldErrors.invalid(DATA.key(key), key, 'duplicate of key present in binaryData'));
    total += byteLength(String(value));
  }
  errs.push(...validateConfigKeys(binary, BINARY_DATA), ...validateBase64Values(binary, BINARY_DATA));
  for (const value of Object.values(binary)) total += typeof value === 'string' ? base64Size(value) : 0;
  // Upstream reports the size on the whole object, with an empty path.
  if (total > MAX_SECRET_SIZE) errs.push(fieldErrors.tooLong(FieldPath.root(''), MAX_SECRET_SIZE));
  return errs;
}

/** upstream's ConfigMap printer: DATA counts data and binaryData keys. */
const CONFIG_MAP_TABLE: TableDefinition<ConfigMap> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Data',
      'string',
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (cm, { now }) => ({
    cells: [cm.metadata?.name ?? '', Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length, since(cm.metadata?.creationTimestamp, now)],
  }),
};

export const defineConfigMaps: DefineResource = () =>
  defineTyped<ConfigMap>({
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    resource: 'configmaps',
    singular: 'configmap',
    namespaced: true,
    shortNames: ['cm'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,

    validate: validateConfigMap,
    validateUpdate: (cm, old) => validateImmutableData(cm, old, ['data', 'binaryData']),
    table: CONFIG_MAP_TABLE,
  });
