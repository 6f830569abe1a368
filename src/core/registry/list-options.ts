/**
 * The resourceVersion rules of docs/API.md, "Reads and resourceVersion" and "Watch", as pure
 * functions: parsing, the invalid LIST/watch parameter combinations, which read a request asks
 * for (the get, list and watch tables), and continue tokens.
 *
 * Upstream answers the invalid combinations with 422 Invalid; Keelson answers 400 BadRequest
 * (docs/API.md, "Errors"). The message and causes stay upstream's
 * (`ListOptions.<meta group> "" is invalid: ...`).
 */
import type { Freshness, WatchStart } from '../storage/resource-storage';
import type { ListOptions } from '../api';
import { badRequest, invalid } from '../../status';
import { fieldErrors, type FieldError } from '../validation/field-errors';

/** Parse a resourceVersion: '' or undefined → undefined; otherwise an unsigned integer (400 if not). */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  const detail = /^\d+$/.test(rv) ? (Number.isSafeInteger(Number(rv)) ? undefined : 'value out of range') : 'invalid syntax';
  if (detail) {
    throw badRequest(
      `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${detail}`,
    );
  }
  return Number(rv);
}

const NOT_OLDER_THAN = 'NotOlderThan';
const EXACT = 'Exact';

/** Upstream's ValidateListOptions / validateWatchOptions (WatchList on, as in release 1.32). */
export function listOptionsErrors(options: ListOptions, isWatch: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const match: string | undefined = options.resourceVersionMatch;
  const path = 'resourceVersionMatch';
  if (isWatch) {
    if (options.sendInitialEvents !== undefined && match !== NOT_OLDER_THAN) {
      errs.push(fieldErrors.forbidden(path, `sendInitialEvents requires setting resourceVersionMatch to ${NOT_OLDER_THAN}`));
    }
    if (match) {
      if (options.sendInitialEvents === undefined) {
        errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      }
      if (match !== NOT_OLDER_THAN) errs.push(fieldErrors.notSupported(path, match, [NOT_OLDER_THAN]));
      if (options.continue) errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return errs;
  }
  if (match) {
    if (!options.resourceVersion) errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (options.continue) errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== EXACT && match !== NOT_OLDER_THAN) errs.push(fieldErrors.notSupported(path, match, [EXACT, NOT_OLDER_THAN, '']));
    if (match === EXACT && options.resourceVersion === '0') {
      errs.push(fieldErrors.forbidden(path, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
  }
  if (options.sendInitialEvents !== undefined) errs.push(fieldErrors.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** Reject an invalid combination: 400 (docs/API.md, "Errors") with upstream's Invalid message and causes. */
export function validateListOptions(options: ListOptions, isWatch: boolean, metaGroup: string): void {
  const errs = listOptionsErrors(options, isWatch);
  if (options.limit !== undefined && options.limit < 0) errs.push(fieldErrors.invalid('limit', options.limit, 'must be non-negative'));
  if (errs.length === 0) return;
  const status = invalid({ group: metaGroup, kind: 'ListOptions' }, '', errs).status;
  throw badRequest(status.message!, status.details?.causes);
}

/** Where a list is served from (docs/API.md, "Reads and resourceVersion"; upstream's delegation rules). */
export type ListPlan =
  /** From the watch cache, chunked by `limit` if set; later chunks come from the store. */
  | { source: 'cache'; freshness: Freshness }
  /** From the store at exactly this revision ("Exact", and legacy limit + non-zero version). */
  | { source: 'exact'; revision: number }
  /** From the store, continuing a token ("Continue token, Exact"). */
  | { source: 'continue'; token: string };

export function planList(options: ListOptions): ListPlan {
  if (options.continue) return { source: 'continue', token: options.continue };
  const rv = parseResourceVersion(options.resourceVersion);
  if (rv === undefined) return { source: 'cache', freshness: { kind: 'most-recent' } };
  if (rv === 0) return { source: 'cache', freshness: { kind: 'any' } };
  const match = options.resourceVersionMatch;
  if (match === 'Exact' || (match === undefined && options.limit !== undefined && options.limit > 0)) return { source: 'exact', revision: rv };
  return { source: 'cache', freshness: { kind: 'not-older-than', revision: rv } };
}

/** get: unset = Most recent, `0` = Any, non-zero = Not older than (docs/API.md, "Reads and resourceVersion"). */
export function planGet(resourceVersion: string | undefined): Freshness {
  const rv = parseResourceVersion(resourceVersion);
  if (rv === undefined) return { kind: 'most-recent' };
  if (rv === 0) return { kind: 'any' };
  return { kind: 'not-older-than', revision: rv };
}

export function planWatch(options: ListOptions): WatchStart {
  const rv = parseResourceVersion(options.resourceVersion);
  const freshness: Freshness = rv === undefined ? { kind: 'most-recent' } : rv === 0 ? { kind: 'any' } : { kind: 'not-older-than', revision: rv };
  switch (options.sendInitialEvents) {
    case true:
      return { freshness, strict: true, sendState: true, markInitialEnd: options.allowWatchBookmarks === true };
    case false:
      if (rv !== undefined && rv > 0) return { exactAfter: rv, freshness, strict: false, sendState: false, markInitialEnd: false };
      return { freshness, strict: false, sendState: false, markInitialEnd: false };
    default:
      if (rv !== undefined && rv > 0) return { exactAfter: rv, freshness, strict: false, sendState: false, markInitialEnd: false };
      return { freshness, strict: false, sendState: true, markInitialEnd: false };
  }
}
