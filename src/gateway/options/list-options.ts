/**
 * The LIST parameter set (SPEC "Endpoints") decoded into `ListOptions`, then checked with
 * upstream's ValidateListOptions (422 `ListOptions.meta... "" is invalid`), with the WatchList
 * feature on as in release 1.32 (SPEC "List, chunking and consistency": streaming list).
 */
import type { ListOptions, ResourceVersionMatch } from '../../core/api';
import { type FieldError, fieldErrors } from '../../core/validation/field-errors';
import type { Naming } from '../../naming';
import { invalid } from '../../status';
import { queryInt64, queryOptionalBool, queryString } from './query';

export interface ParsedListOptions {
  /** `watch` was set (a watch rather than a list). */
  watch: boolean;
  options: ListOptions;
}

interface RawListOptions {
  watch: boolean;
  resourceVersion: string;
  resourceVersionMatch: string;
  continue: string;
  sendInitialEvents?: boolean;
}

const NOT_OLDER_THAN = 'NotOlderThan';
const EXACT = 'Exact';

/** Upstream validateWatchOptions / ValidateListOptions. */
export function validateListOptions(o: RawListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  const path = 'resourceVersionMatch';
  if (o.watch) {
    if (o.sendInitialEvents !== undefined && match !== NOT_OLDER_THAN) {
      errs.push(fieldErrors.forbidden(path, `sendInitialEvents requires setting resourceVersionMatch to ${NOT_OLDER_THAN}`));
    }
    if (match) {
      if (o.sendInitialEvents === undefined) {
        errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      }
      if (match !== NOT_OLDER_THAN) errs.push(fieldErrors.notSupported(path, match, [NOT_OLDER_THAN]));
      if (o.continue) errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return errs;
  }
  if (match) {
    if (!o.resourceVersion) errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (o.continue) errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== EXACT && match !== NOT_OLDER_THAN) errs.push(fieldErrors.notSupported(path, match, [EXACT, NOT_OLDER_THAN, '']));
    if (match === EXACT && o.resourceVersion === '0') {
      errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (o.sendInitialEvents !== undefined) errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** Decode (400 on malformed integers) and validate (422) the LIST parameters. */
export function parseListOptions(query: URLSearchParams, naming: Naming): ParsedListOptions {
  const watch = queryOptionalBool(query, 'watch') ?? false;
  const limit = queryInt64(query, 'limit');
  const timeoutSeconds = queryInt64(query, 'timeoutSeconds');
  const allowWatchBookmarks = queryOptionalBool(query, 'allowWatchBookmarks');
  const sendInitialEvents = queryOptionalBool(query, 'sendInitialEvents');
  const raw: RawListOptions = {
    watch,
    resourceVersion: queryString(query, 'resourceVersion') ?? '',
    resourceVersionMatch: queryString(query, 'resourceVersionMatch') ?? '',
    continue: queryString(query, 'continue') ?? '',
    sendInitialEvents,
  };
  const errs = validateListOptions(raw);
  if (errs.length) throw invalid({ group: naming.groups.meta, kind: 'ListOptions' }, '', errs);

  const options: ListOptions = {};
  if (raw.resourceVersion) options.resourceVersion = raw.resourceVersion;
  if (raw.resourceVersionMatch) options.resourceVersionMatch = raw.resourceVersionMatch as ResourceVersionMatch;
  if (limit !== undefined && limit > 0) options.limit = limit;
  if (raw.continue) options.continue = raw.continue;
  const labelSelector = queryString(query, 'labelSelector');
  if (labelSelector) options.labelSelector = labelSelector;
  const fieldSelector = queryString(query, 'fieldSelector');
  if (fieldSelector) options.fieldSelector = fieldSelector;
  if (timeoutSeconds !== undefined) options.timeoutSeconds = timeoutSeconds;
  if (allowWatchBookmarks) options.allowWatchBookmarks = true;
  if (sendInitialEvents !== undefined) options.sendInitialEvents = sendInitialEvents;
  return { watch, options };
}
