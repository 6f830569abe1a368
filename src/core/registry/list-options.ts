/**
 * resourceVersion parsing, the invalid LIST parameter combinations of SPEC "List, chunking and
 * consistency", and continue tokens. Upstream answers some combinations with 422; the spec
 * says 400 BadRequest, and the spec wins. Messages keep upstream's wording.
 */
import type { ListOptions } from '../api';
import { badRequest, resourceExpired } from '../../status';

/** Parse a resourceVersion string: '' or undefined → undefined; otherwise a non-negative integer. */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d+$/.test(rv)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  const n = Number(rv);
  if (!Number.isSafeInteger(n)) throw badRequest(`invalid resource version: ${JSON.stringify(rv)}`);
  return n;
}

/** Reject the invalid combinations of the spec's list table (and upstream's ListOptions validation). */
export function validateListOptions(options: ListOptions, isWatch: boolean): void {
  const { resourceVersion: rv, resourceVersionMatch: match } = options;
  if (match !== undefined) {
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      throw badRequest(`resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`);
    }
    if (!rv) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (options.continue) throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
    if (match === 'Exact' && rv === '0') throw badRequest('resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
  }
  if (options.limit !== undefined && options.limit < 0) throw badRequest('limit: Invalid value: must be non-negative');
  if (options.sendInitialEvents !== undefined) {
    if (!isWatch) throw badRequest('sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list');
    if (match !== 'NotOlderThan') {
      throw badRequest('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
    }
  }
  if (options.continue && rv && rv !== '0') {
    throw badRequest('specifying resource version is not allowed when using continue');
  }
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

/** Upstream's message for a continue token whose revision was compacted (SPEC Errors: 410). */
export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export function continueExpired(): Error {
  return resourceExpired(CONTINUE_EXPIRED_MESSAGE);
}

/** An opaque token carrying the snapshot revision and the next key, relative to the list's prefix. */
export function encodeContinue(version: string, rv: number, start: string): string {
  const token: ContinueToken = { v: version, rv, start };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

export function decodeContinue(token: string, version: string): { rv: number; start: string } {
  let parsed: ContinueToken;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as ContinueToken;
  } catch {
    throw badRequest(`continue key is not valid: incorrect encoded start resourceVersion (version ${version})`);
  }
  if (parsed.v !== version) throw badRequest(`continue key is not valid: server does not recognize this encoded key`);
  if (!Number.isSafeInteger(parsed.rv) || parsed.rv <= 0) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version ' + version + ')');
  if (typeof parsed.start !== 'string' || parsed.start.length === 0) throw badRequest('continue key is not valid: encoded start key empty');
  if (parsed.start.split('/').some((p) => p === '..' || p === '.') || parsed.start.startsWith('/')) {
    throw badRequest('continue key is not valid: path traversal not allowed');
  }
  return { rv: parsed.rv, start: parsed.start };
}
