/**
 * The resourceVersion rules of SPEC "List, chunking and consistency", as pure functions:
 * parsing, the invalid LIST/watch parameter combinations, which read a request asks for (the
 * spec's get, list and watch tables), and continue tokens.
 *
 * Upstream answers the invalid combinations with 422 Invalid; the spec's errors table says 400
 * BadRequest, and the spec wins. The message and causes stay upstream's
 * (`ListOptions.<meta group> "" is invalid: ...`).
 */
import type { Freshness, WatchStart } from '../storage/resource-storage';
import type { ListOptions } from '../api';
import { badRequest, invalid, resourceExpired, type StatusError } from '../../status';
import { fieldErrors, type FieldError } from '../validation/field-errors';

/** Parse a resourceVersion: '' or undefined → undefined; otherwise an unsigned integer (400 if not). */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  const detail = /^\d+$/.test(rv) ? (Number.isSafeInteger(Number(rv)) ? undefined : 'value out of range') : 'invalid syntax';
  if (detail) {
    throw badRequest(`invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${detail}`);
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

/** Reject an invalid combination: 400 (SPEC Errors) with upstream's Invalid message and causes. */
export function validateListOptions(options: ListOptions, isWatch: boolean, metaGroup: string): void {
  const errs = listOptionsErrors(options, isWatch);
  if (options.limit !== undefined && options.limit < 0) errs.push(fieldErrors.invalid('limit', options.limit, 'must be non-negative'));
  if (errs.length === 0) return;
  const status = invalid({ group: metaGroup, kind: 'ListOptions' }, '', errs).status;
  throw badRequest(status.message!, status.details?.causes);
}


/** Where a list is served from (SPEC list table; upstream's delegation rules). */
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

/** get: unset = Most recent, `0` = Any, non-zero = Not older than (SPEC). */
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

interface ContinueTokenJson {
  v: string;
  rv: number;
  start: string;
}

/** A decoded continue token: the snapshot revision (-1: continue at the latest) and the next key, relative to the list's prefix. */
export interface ContinueToken {
  revision: number;
  start: string;
}

/**
 * Upstream's message for a continue token whose revision was compacted (SPEC Errors: 410). The
 * Status also carries a fresh token that continues at the latest revision.
 */
export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export const LIST_EXPIRED_MESSAGE = 'The resourceVersion for the provided list is too old.';

/** 410 Expired for a compacted continue token, with `metadata.continue` to go on at the latest revision. */
export function continueExpired(version: string, start: string): StatusError {
  const err = resourceExpired(CONTINUE_EXPIRED_MESSAGE);
  const metadata: { resourceVersion?: string; continue?: string } = { continue: encodeContinue(version, -1, start) };
  err.status.metadata = metadata;
  return err;
}

/** An opaque token carrying the snapshot revision and the next key, relative to the list's prefix. */
export function encodeContinue(version: string, revision: number, start: string): string {
  const token: ContinueTokenJson = { v: version, rv: revision, start };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function invalidToken(detail: string): StatusError {
  return badRequest(`invalid continue token: continue key is not valid${detail}`);
}

/** Decode a token (400 `invalid continue token: ...` as upstream when it is malformed). */
export function decodeContinue(token: string, version: string): ContinueToken {
  let parsed: Partial<ContinueTokenJson>;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Partial<ContinueTokenJson>;
    if (parsed === null || typeof parsed !== 'object') throw new Error('not an object');
  } catch (err) {
    throw invalidToken(`: ${(err as Error).message}`);
  }
  if (parsed.v !== version) throw invalidToken(': server does not recognize this encoded key');
  if (typeof parsed.rv !== 'number' || !Number.isSafeInteger(parsed.rv) || parsed.rv === 0 || parsed.rv < -1) {
    throw invalidToken(`: incorrect encoded start resourceVersion (version ${version})`);
  }
  if (typeof parsed.start !== 'string' || parsed.start.length === 0) throw invalidToken(': encoded start key empty');
  // Upstream's path.Clean check: a start key that is not already clean could range outside the prefix.
  if (parsed.start.split('/').some((part) => part === '' || part === '.' || part === '..')) {
    throw invalidToken(`: ${parsed.start}`);
  }
  return { revision: parsed.rv, start: parsed.start };
}
