/**
 * Key-range helpers shared by the backends. Keys are compared as bytes (etcd) or as UTF-8 text
 * under SQLite's BINARY collation (embedded), which orders the same way: memcmp of UTF-8 bytes.
 */

/**
 * etcd's `range_end` for "every key starting with `prefix`": the prefix with its last byte
 * incremented (trailing 0xff bytes dropped first). When no such key exists (empty prefix, or all
 * 0xff) etcd's convention is a single zero byte, meaning "to the end of the keyspace".
 */
export function prefixEndBytes(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i] = prefix[i] + 1;
      return end;
    }
  }
  return Buffer.from([0]);
}

const MAX_CODE_POINT = 0x10ffff;

/**
 * The same bound over JS strings: the prefix with its last code point incremented, so that
 * `prefix <= name < end` selects exactly the names starting with `prefix` (UTF-8 preserves
 * code-point order). Returns undefined when there is no upper bound (empty prefix).
 */
export function prefixEndString(prefix: string): string | undefined {
  const codePoints = Array.from(prefix);
  while (codePoints.length > 0) {
    const last = codePoints.pop() as string;
    let next = (last.codePointAt(0) as number) + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000; // skip surrogates: not encodable as UTF-8
    if (next <= MAX_CODE_POINT) return codePoints.join('') + String.fromCodePoint(next);
  }
  return undefined;
}

/**
 * Where a (possibly continued) list starts. A `startKey` outside the prefix is a caller bug
 * (continue tokens are validated by the core), so it throws rather than returning odd pages.
 */
export function rangeStart(prefix: string, startKey: string | undefined): string {
  if (startKey === undefined || startKey === '') return prefix;
  if (!startKey.startsWith(prefix)) {
    throw new RangeError(`list startKey ${JSON.stringify(startKey)} is not under prefix ${JSON.stringify(prefix)}`);
  }
  return startKey;
}

/** Revision option → the revision to read at, or undefined for "latest" (etcd: <= 0 means latest). */
export function requestedRevision(revision: number | undefined): number | undefined {
  return revision !== undefined && revision > 0 ? revision : undefined;
}
