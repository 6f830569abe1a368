/**
 * Continue tokens of chunked lists: opaque, carrying the snapshot revision and the next key
 * relative to the list's prefix, and upstream's 400 / 410 answers when one is malformed or its
 * snapshot was compacted.
 */
import { type StatusError, badRequest, resourceExpired } from '../../status';

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
 * Upstream's message for a continue token whose revision was compacted (410; docs/API.md, "Errors"). The
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
