/**
 * The conversions an `Accept` clause can ask for (`as=Table`, `as=PartialObjectMetadata`,
 * `as=PartialObjectMetadataList`, in `meta.<vendor>/v1` or `v1beta1`), applied to what the core
 * returned, as upstream's transformResponseObject / doTransformObject do: a Status passes
 * through; the metadata forms refuse the wrong shape with 406; a Table honours `includeObject`
 * (400 for a value other than None, Metadata, Object) and prints AGE from the injected clock.
 * Converted objects are written with the meta scheme's codecs, which have no CBOR in 1.32.
 */
import {
  type ApiObject,
  type ResourceDefinition,
  type IncludeObject,
  type Table,
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  buildTable,
  isList,
  type TableColumnDefinition,
} from '../../core';
import type { Naming } from '../../naming';
import { type StatusError, badRequest, notAcceptable } from '../../status';
import { type Codecs, codecsWithout } from './codec';
import type { Conversion } from './negotiate';

export interface ConversionContext {
  definition: ResourceDefinition;
  naming: Naming;
  /** Milliseconds since the epoch (the injected clock). */
  now: number;
  query: URLSearchParams;
}

function notAcceptableBecause(message: string): StatusError {
  const err = notAcceptable([]);
  err.status.message = message;
  return err;
}

/** The Go type upstream names in its 406 messages, e.g. `*apps.ReplicaSetList` (events live in core). */
function goTypeName(value: ApiObject, definition: ResourceDefinition, naming: Naming): string {
  const apiVersion =
    typeof value.apiVersion === 'string' ? value.apiVersion : definition.group ? `${definition.group}/${definition.version}` : definition.version;
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const pkg = group === '' || group === naming.groups.events ? 'core' : group.split('.')[0];
  const kind = typeof value.kind === 'string' ? value.kind : isList(value) ? `${definition.kind}List` : definition.kind;
  return `*${pkg}.${kind}`;
}

/** Upstream ValidateTableOptions on the `includeObject` query parameter. */
export function includeObjectOf(query: URLSearchParams): IncludeObject | '' {
  const value = query.get('includeObject') ?? '';
  if (value === '' || value === 'None' || value === 'Metadata' || value === 'Object') return value;
  throw badRequest(
    `Unable to convert to Table as requested: includeObject: Invalid value: ${JSON.stringify(value)}: must be 'Metadata', 'Object', 'None', or empty`,
  );
}

/** `{keyDomain}` and `{groupDomain}` in column descriptions, in the naming profile's words. */
function vendorColumns(table: Table, naming: Naming): Table {
  if (!table.columnDefinitions) return table;
  const words = (text: string) => text.replace(/\{keyDomain\}/g, naming.keyDomain).replace(/\{groupDomain\}/g, naming.groupDomain);
  const columnDefinitions = table.columnDefinitions.map(
    (c): TableColumnDefinition => (c.description.includes('{') ? { ...c, description: words(c.description) } : c),
  );
  return { ...table, columnDefinitions };
}

export interface ConvertOptions {
  /** Watch events after the first: the Table has no column definitions. */
  noHeaders?: boolean;
  /** Already validated `includeObject` (watches validate once). */
  includeObject?: IncludeObject | '';
}

/** `value` as the conversion asks; Status objects pass through. */
export function convertObject(value: unknown, convert: Conversion, ctx: ConversionContext, options: ConvertOptions = {}): unknown {
  const obj = value as ApiObject;
  if (obj?.kind === 'Status') return value;
  const { definition, naming } = ctx;
  const metaApiVersion = `${convert.group}/${convert.version}`;
  switch (convert.kind) {
    case 'PartialObjectMetadata':
      if (isList(obj)) {
        throw notAcceptableBecause(`you requested PartialObjectMetadata, but the requested object is a list (${goTypeName(obj, definition, naming)})`);
      }
      return asPartialObjectMetadata(obj, metaApiVersion);
    case 'PartialObjectMetadataList':
      if (!isList(obj)) {
        throw notAcceptableBecause(`you requested PartialObjectMetadataList, but the requested object is not a list (${goTypeName(obj, definition, naming)})`);
      }
      return asPartialObjectMetadataList(obj, metaApiVersion);
    case 'Table': {
      const includeObject = options.includeObject ?? includeObjectOf(ctx.query);
      const apiVersion = definition.group ? `${definition.group}/${definition.version}` : definition.version;
      const table = buildTable(obj, definition.table as never, {
        metaApiVersion,
        apiVersion,
        kind: definition.kind,
        includeObject,
        noHeaders: options.noHeaders,
        ctx: { now: ctx.now },
      });
      return vendorColumns(table, naming);
    }
    default:
      throw notAcceptableBecause(`no ${convert.kind} exists in group version ${metaApiVersion}`);
  }
}

/** Upstream's meta scheme codecs (metainternalversionscheme.Codecs): JSON, YAML and protobuf, never CBOR. */
export function metaCodecsOf(codecs: Codecs): Codecs {
  return codecsWithout(codecs, (c) => c.mediaType === 'application/cbor');
}
