/**
 * String-format rules shared by every type: DNS-1123 labels and subdomains, qualified names
 * (label keys), label values, config keys and path-segment names. Each check returns upstream's
 * detail messages (apimachinery `util/validation`), empty when the value is fine; callers wrap
 * them into field errors with the path they know.
 */

export const DNS1123_LABEL_MAX_LENGTH = 63;
export const DNS1035_LABEL_MAX_LENGTH = 63;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;
export const QUALIFIED_NAME_MAX_LENGTH = 63;
export const LABEL_VALUE_MAX_LENGTH = 63;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';

const DNS1123_LABEL_RE = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL_RE = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const QUALIFIED_NAME_RE = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
/** `prefix/name`: neither part admits a '/', so this also says there is exactly one. */
const PREFIXED_QUALIFIED_NAME_RE = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}/${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE_RE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const CONFIG_KEY_RE = new RegExp(`^${CONFIG_KEY_FMT}$`);

const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

/*
 * Each check first tries the common case, a value its pattern matches within the length limit:
 * the patterns admit ASCII only, so such a value's length is its byte count and nothing else can
 * be wrong with it. That skips the UTF-8 count (a native call) and the splitting that a value
 * with something to report needs.
 */

/** Go's `len` of a string: its UTF-8 byte count, which is what upstream's length limits count. */
export function byteLength(value: string): number {
  return Buffer.byteLength(value, 'utf8');
}

/** "must be no more than N characters" (upstream MaxLenError). */
export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

/** upstream RegexError: the message, examples and the regex (its double space before "or" included). */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function emptyError(): string {
  return 'must be non-empty';
}

export function inclusiveRangeError(lo: number, hi: number): string {
  return `must be between ${lo} and ${hi}, inclusive`;
}

export function isDns1123Label(value: string): string[] {
  if (value.length <= DNS1123_LABEL_MAX_LENGTH && DNS1123_LABEL_RE.test(value)) return [];
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1123_LABEL_MAX_LENGTH));
  if (!DNS1123_LABEL_RE.test(value)) {
    // A valid subdomain that is no valid label can only be one with dots (length is checked above).
    if (DNS1123_SUBDOMAIN_RE.test(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

export function isDns1123Subdomain(value: string): string[] {
  if (value.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && DNS1123_SUBDOMAIN_RE.test(value)) return [];
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!DNS1123_SUBDOMAIN_RE.test(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** A DNS-1035 label (upstream IsDNS1035Label): like a DNS-1123 label, but starting with a letter. */
export function isDns1035Label(value: string): string[] {
  if (value.length <= DNS1035_LABEL_MAX_LENGTH && DNS1035_LABEL_RE.test(value)) return [];
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX_LENGTH) errs.push(maxLenError(DNS1035_LABEL_MAX_LENGTH));
  if (!DNS1035_LABEL_RE.test(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/**
 * Whether `isQualifiedName` has nothing to say about `value`, without making its list: a name
 * with no prefix (the pattern admits no '/'), or a prefix and a name within their limits.
 */
export function qualifiedNameOk(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return value.length <= QUALIFIED_NAME_MAX_LENGTH && QUALIFIED_NAME_RE.test(value);
  return slash <= DNS1123_SUBDOMAIN_MAX_LENGTH && value.length - slash - 1 <= QUALIFIED_NAME_MAX_LENGTH && PREFIXED_QUALIFIED_NAME_RE.test(value);
}

/** Whether `isValidLabelValue` has nothing to say about `value`, without making its list. */
export function labelValueOk(value: string): boolean {
  return value.length <= LABEL_VALUE_MAX_LENGTH && LABEL_VALUE_RE.test(value);
}

/** A "qualified name" (label keys, annotation keys, finalizers): `[prefix/]name`, the prefix a DNS subdomain. */
export function isQualifiedName(value: string): string[] {
  if (qualifiedNameOk(value)) return [];
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${emptyError()}`);
    else errs.push(...isDns1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push(`name part ${emptyError()}`);
  else if (byteLength(name) > QUALIFIED_NAME_MAX_LENGTH) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX_LENGTH)}`);
  if (!QUALIFIED_NAME_RE.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  if (labelValueOk(value)) return [];
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX_LENGTH) errs.push(maxLenError(LABEL_VALUE_MAX_LENGTH));
  if (!LABEL_VALUE_RE.test(value)) errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/** Keys of ConfigMap and Secret data. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX_LENGTH));
  if (!CONFIG_KEY_RE.test(value)) errs.push(regexError(CONFIG_KEY_MSG, CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

const PATH_SEGMENT_MAY_NOT_BE = ['.', '..'];
const PATH_SEGMENT_MAY_NOT_CONTAIN = ['/', '%'];

/** Names that only have to survive as one URL path segment (upstream IsValidPathSegmentName). */
export function isValidPathSegmentName(name: string): string[] {
  for (const bad of PATH_SEGMENT_MAY_NOT_BE) if (name === bad) return [`may not be '${bad}'`];
  return isValidPathSegmentPrefix(name);
}

/** A prefix for a generated path-segment name: only the forbidden characters matter. */
export function isValidPathSegmentPrefix(name: string): string[] {
  return PATH_SEGMENT_MAY_NOT_CONTAIN.filter((bad) => name.includes(bad)).map((bad) => `may not contain '${bad}'`);
}

/**
 * A generateName may end with '-' although a name may not: upstream masks the ending before
 * checking (maskTrailingDash, which replaces the last two characters by 'a').
 */
function maskTrailingDash(prefix: string): string {
  if (!prefix.endsWith('-')) return prefix;
  return `${prefix.slice(0, Math.max(0, prefix.length - 2))}a`;
}

/** How `metadata.name` is validated (upstream's ValidateNameFunc of each type). */
export type NameRule = 'dns1123Subdomain' | 'dns1123Label' | 'dns1035Label' | 'pathSegment';

/**
 * Check a name (or, with `prefix`, a generateName) against a type's name rule; upstream's
 * ValidateNameFunc family (NameIsDNSSubdomain, NameIsDNSLabel, NameIsDNS1035Label, ValidatePathSegmentName).
 */
export function validateName(name: string, rule: NameRule, prefix = false): string[] {
  switch (rule) {
    case 'dns1123Subdomain':
      return isDns1123Subdomain(prefix ? maskTrailingDash(name) : name);
    case 'dns1123Label':
      return isDns1123Label(prefix ? maskTrailingDash(name) : name);
    case 'dns1035Label':
      return isDns1035Label(prefix ? maskTrailingDash(name) : name);
    case 'pathSegment':
      return prefix ? isValidPathSegmentPrefix(name) : isValidPathSegmentName(name);
  }
}
