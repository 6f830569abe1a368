/**
 * Limits on decoded request bodies, checked before any other work so that a small hostile body
 * cannot exhaust the stack, the heap or the CPU. Upstream's decoders refuse nesting past 10000
 * levels and YAML with excessive aliasing, and its request limit (3 MiB) bounds the rest; here
 * nesting stops at 1000 levels — far beyond any real object — so that no recursive step later
 * in the request (patches, apply, validation, encoders) can run out of stack, and the number of
 * values one body may decode to is bounded too (YAML aliases and CBOR can expand past the bytes).
 * Every check is iterative, in time linear in the input.
 */
import { type StatusError, badRequest, requestEntityTooLarge } from '../status';

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_NESTING_DEPTH = 1000;
/** Most values (scalars, objects, arrays) one decoded body may hold. */
export const MAX_DECODED_VALUES = 1_000_000;
/** Longest string one decoded body may hold, in UTF-16 code units (the request limit, 3 MiB). */
export const MAX_STRING_LENGTH = 3 * 1024 * 1024;

/** A body past one of the limits: `limit` names it, the message says it in a client's words. */
export class LimitExceeded extends Error {
  constructor(
    readonly limit: 'depth' | 'values' | 'string',
    message: string,
  ) {
    super(message);
    this.name = 'LimitExceeded';
  }
}

const depthExceeded = () => new LimitExceeded('depth', `the request body is nested deeper than ${MAX_NESTING_DEPTH} levels`);

/**
 * Check a decoded value against the limits; throws LimitExceeded. A door that checked a body
 * hands it to the core saying so (`Owned.withinLimits` in core/api.ts), and the core, which
 * checks every other caller's, does not walk it again.
 */
export function checkDecodedLimits(value: unknown): void {
  // An explicit stack of values and their depths (no object per entry, no Object.values array).
  const values: unknown[] = [value];
  const depths: number[] = [0];
  let count = 0;
  while (values.length > 0) {
    const v = values.pop();
    const depth = depths.pop()!;
    if (++count > MAX_DECODED_VALUES) throw new LimitExceeded('values', `the request body decodes to more than ${MAX_DECODED_VALUES} values`);
    if (typeof v === 'string') {
      if (v.length > MAX_STRING_LENGTH) throw new LimitExceeded('string', `the request body holds a string longer than ${MAX_STRING_LENGTH} characters`);
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_NESTING_DEPTH) throw depthExceeded();
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        values.push(v[i]);
        depths.push(depth + 1);
      }
    } else if (!ArrayBuffer.isView(v)) {
      for (const key in v) {
        if (!Object.hasOwn(v, key)) continue;
        values.push((v as Record<string, unknown>)[key]);
        depths.push(depth + 1);
      }
    }
  }
}

/**
 * Check the raw bytes of a JSON or YAML document for nesting before a parser sees them (a
 * YAML parser, like a recursive JSON one, would exhaust its stack or memory first): flow
 * brackets outside strings, and block nesting by indentation and compact `- ` sequence markers.
 * Conservative: it may count brackets inside a YAML plain scalar, never fewer than there are.
 */
export function checkRawNesting(text: string): void {
  let depth = 0;
  let quote = 0;
  let lineStart = true;
  let indent = 0;
  // The previous character outside quotes: a quote only opens a string where a value can start.
  let prev = 0x0a;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (quote) {
      if (c === 0x5c && quote === 0x22) i++;
      else if (c === quote) {
        quote = 0;
        prev = c;
      }
      continue;
    }
    if (c === 0x0a) {
      lineStart = true;
      indent = 0;
      prev = c;
      continue;
    }
    if (lineStart) {
      // Leading spaces and compact sequence markers (`- - - x`) each open a block level at most.
      if (c === 0x20 || c === 0x2d /* - */ || c === 0x09) {
        if (++indent > MAX_NESTING_DEPTH) throw depthExceeded();
        prev = c;
        continue;
      }
      lineStart = false;
    }
    const valueStart =
      prev === 0x0a || prev === 0x20 || prev === 0x09 || prev === 0x3a || prev === 0x5b || prev === 0x7b || prev === 0x2c || prev === 0x2d || prev === 0x3f;
    if (c === 0x23 /* # */ && (prev === 0x0a || prev === 0x20 || prev === 0x09)) {
      // A YAML comment runs to the end of the line.
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end - 1;
      continue;
    }
    if ((c === 0x22 /* " */ || c === 0x27) /* ' */ && valueStart) quote = c;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_NESTING_DEPTH) throw depthExceeded();
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      if (depth > 0) depth--;
    }
    prev = c;
  }
}

/** What one scan of a JSON text counted (checkJsonText). */
export interface JsonTextCounts {
  /** Object members the text writes: its colons outside strings. */
  readonly members: number;
  /**
   * At least as many as the values the text decodes to: one, plus one per comma and per
   * opening bracket outside strings (a container of k values writes k - 1 commas).
   */
  readonly values: number;
}

/**
 * checkRawNesting for a JSON document: brackets outside strings, with string contents skipped by
 * `indexOf` (a JSON string ends at its first unescaped quote). Counts the object members, which
 * decodeStrictJson compares with the parsed value's keys to know that no key was given twice,
 * and bounds the values, so that checkJsonDecodeLimits need not walk the decoded value.
 * Malformed text may be counted short; JSON.parse refuses it next, and it parses without
 * recursion.
 */
export function checkJsonText(text: string): JsonTextCounts {
  let depth = 0;
  let members = 0;
  let values = 1;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = text.indexOf('"', i + 1);
      while (end > 0 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end < 0) break;
      i = end;
    } else if (c === 0x2c) {
      values++;
    } else if (c === 0x7b || c === 0x5b) {
      values++;
      if (++depth > MAX_NESTING_DEPTH) throw depthExceeded();
    } else if (c === 0x7d || c === 0x5d) {
      if (depth > 0) depth--;
    } else if (c === 0x3a) {
      members++;
    }
  }
  return { members, values };
}

/** checkJsonText's count of object members. */
export function checkJsonNesting(text: string): number {
  return checkJsonText(text).members;
}

/**
 * checkDecodedLimits for `value`, which JSON.parse made from `text` after checkJsonText counted
 * it: its nesting is the text's, already checked; no string in it is longer than the text; and
 * when the values the scan counted are within the limit, so are the decoded ones. Only a text
 * counted past the limit (its count is a bound, not exact) has its value walked.
 */
export function checkJsonDecodeLimits(value: unknown, text: string, counts: JsonTextCounts): void {
  if (counts.values > MAX_DECODED_VALUES || text.length > MAX_STRING_LENGTH) checkDecodedLimits(value);
}

/** Whether the quote at `at` follows an odd number of backslashes. */
function isEscaped(text: string, at: number): boolean {
  let k = at - 1;
  while (text.charCodeAt(k) === 0x5c) k--;
  return ((at - 1 - k) & 1) === 1;
}

/** The Status a client gets for a body past a limit: 400 for nesting, 413 for size. */
export function limitError(err: LimitExceeded): StatusError {
  return err.limit === 'depth' ? badRequest(err.message) : requestEntityTooLarge(err.message);
}

/** Run `check`, turning LimitExceeded into its Status. */
export function withinLimits<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof LimitExceeded) throw limitError(err);
    throw err;
  }
}
