/**
 * IP addresses and prefixes as Go's `net/netip` reads and prints them, for Kubernetes' CEL `ip`
 * and `cidr` libraries: `ParseAddr` and `ParsePrefix` with their error words, the canonical
 * text (`Addr.String`, RFC 5952 for IPv6), the address classes and prefix containment.
 */

export class NetipError extends Error {}

/** An address: 4 or 16 bytes, and a zone (IPv6 only). */
export interface Addr {
  readonly bytes: Uint8Array;
  readonly zone: string;
}

export interface Prefix {
  readonly addr: Addr;
  readonly bits: number;
}

const quote = (s: string) => JSON.stringify(s);

function addrError(input: string, msg: string, at?: string): NetipError {
  return new NetipError(`ParseAddr(${quote(input)}): ${msg}${at !== undefined && at !== '' ? ` (at ${quote(at)})` : ''}`);
}

function parseIPv4Fields(input: string, s: string, into: Uint8Array, offset: number): void {
  let value = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c >= '0' && c <= '9') {
      if (digits === 1 && value === 0) throw addrError(input, 'IPv4 field has octet with leading zero');
      value = value * 10 + (c.charCodeAt(0) - 48);
      digits++;
      if (value > 255) throw addrError(input, 'IPv4 field has value >255');
    } else if (c === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.') throw addrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      if (pos === 3) throw addrError(input, 'IPv4 address too long');
      into[offset + pos++] = value;
      value = 0;
      digits = 0;
    } else {
      throw addrError(input, 'unexpected character', s.slice(i));
    }
  }
  if (pos < 3) throw addrError(input, 'IPv4 address too short');
  into[offset + 3] = value;
}

function parseIPv6(input: string): Addr {
  let s = input;
  let zone = '';
  const percent = s.indexOf('%');
  if (percent >= 0) {
    zone = s.slice(percent + 1);
    s = s.slice(0, percent);
    if (zone === '') throw addrError(input, 'zone must be a non-empty string');
  }
  const ip = new Uint8Array(16);
  let ellipsis = -1;
  if (s.startsWith('::')) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === '') return { bytes: ip, zone };
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const hex = parseInt(s[off]!, 16);
      if (Number.isNaN(hex)) break;
      acc = acc * 16 + hex;
      if (off > 3) throw addrError(input, 'each group must have 4 or less digits', s);
      if (acc > 0xffff) throw addrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw addrError(input, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12) throw addrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16) throw addrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      parseIPv4Fields(input, s, ip, i);
      s = '';
      i += 4;
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s === '') break;
    if (s[0] !== ':') throw addrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) throw addrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw addrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s === '') break;
    }
  }
  if (s !== '') throw addrError(input, 'trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw addrError(input, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    ip.fill(0, ellipsis, ellipsis + n);
  } else if (ellipsis >= 0) {
    throw addrError(input, 'the :: must expand to at least one field of zeros', s);
  }
  return { bytes: ip, zone };
}

export function parseAddr(s: string): Addr {
  for (const c of s) {
    if (c === '.') {
      const bytes = new Uint8Array(4);
      parseIPv4Fields(s, s, bytes, 0);
      return { bytes, zone: '' };
    }
    if (c === ':') return parseIPv6(s);
    if (c === '%') throw addrError(s, 'missing IPv6 address');
  }
  throw addrError(s, 'unable to parse IP');
}

export const is4 = (a: Addr) => a.bytes.length === 4;

/** An IPv6 address of the form ::ffff:a.b.c.d. */
export function is4In6(a: Addr): boolean {
  if (is4(a)) return false;
  for (let i = 0; i < 10; i++) if (a.bytes[i] !== 0) return false;
  return a.bytes[10] === 0xff && a.bytes[11] === 0xff;
}

/** Go's Addr.String: dotted IPv4; IPv6 in lower case with the longest run of zero fields as `::`. */
export function addrText(a: Addr): string {
  if (is4(a)) return Array.from(a.bytes).join('.');
  const fields = Array.from({ length: 8 }, (_, k) => (a.bytes[2 * k]! << 8) | a.bytes[2 * k + 1]!);
  let zeroStart = -1;
  let zeroEnd = -1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && fields[j] === 0) j++;
    if (j - i >= 2 && j - i > zeroEnd - zeroStart) {
      zeroStart = i;
      zeroEnd = j;
    }
  }
  let out = '';
  if (is4In6(a)) {
    out = `::ffff:${Array.from(a.bytes.slice(12)).join('.')}`;
  } else {
    for (let i = 0; i < 8; i++) {
      if (i === zeroStart) {
        out += '::';
        i = zeroEnd - 1;
        continue;
      }
      if (out !== '' && !out.endsWith(':')) out += ':';
      out += fields[i]!.toString(16);
    }
  }
  return a.zone ? `${out}%${a.zone}` : out;
}

const allZero = (a: Addr) => a.bytes.every((b) => b === 0);

export function isUnspecified(a: Addr): boolean {
  return allZero(a);
}

export function isLoopback(a: Addr): boolean {
  if (is4(a)) return a.bytes[0] === 127;
  return a.bytes.slice(0, 15).every((b) => b === 0) && a.bytes[15] === 1;
}

export function isMulticast(a: Addr): boolean {
  return is4(a) ? (a.bytes[0]! & 0xf0) === 0xe0 : a.bytes[0] === 0xff;
}

export function isLinkLocalMulticast(a: Addr): boolean {
  if (is4(a)) return a.bytes[0] === 224 && a.bytes[1] === 0 && a.bytes[2] === 0;
  return a.bytes[0] === 0xff && (a.bytes[1]! & 0x0f) === 0x02;
}

export function isLinkLocalUnicast(a: Addr): boolean {
  if (is4(a)) return a.bytes[0] === 169 && a.bytes[1] === 254;
  return a.bytes[0] === 0xfe && (a.bytes[1]! & 0xc0) === 0x80;
}

export function isGlobalUnicast(a: Addr): boolean {
  if (is4(a) && (allZero(a) || a.bytes.every((b) => b === 255))) return false;
  return !(!is4(a) && allZero(a)) && !isLoopback(a) && !isMulticast(a) && !isLinkLocalUnicast(a);
}

export function parsePrefix(s: string): Prefix {
  const fail = (msg: string) => new NetipError(`netip.ParsePrefix(${quote(s)}): ${msg}`);
  const slash = s.lastIndexOf('/');
  if (slash < 0) throw fail("no '/'");
  let addr: Addr;
  try {
    addr = parseAddr(s.slice(0, slash));
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (!is4(addr) && addr.zone !== '') throw fail('IPv6 zones cannot be present in a prefix');
  const bitsText = s.slice(slash + 1);
  if ((bitsText.length > 1 && !(bitsText[0]! >= '1' && bitsText[0]! <= '9')) || !/^[+-]?[0-9]+$/.test(bitsText))
    throw fail(`bad bits after slash: ${quote(bitsText)}`);
  const bits = Number(bitsText);
  if (bits < 0 || bits > (is4(addr) ? 32 : 128)) throw fail('prefix length out of range');
  return { addr, bits };
}

export function masked(p: Prefix): Prefix {
  const bytes = Uint8Array.from(p.addr.bytes);
  for (let bit = p.bits; bit < bytes.length * 8; bit++) bytes[bit >> 3]! &= ~(0x80 >> (bit & 7));
  return { addr: { bytes, zone: '' }, bits: p.bits };
}

export function prefixText(p: Prefix): string {
  return `${addrText(p.addr)}/${p.bits}`;
}

/** Go's Prefix.Contains: an address of the same family whose first `bits` bits match. */
export function contains(p: Prefix, a: Addr): boolean {
  if (is4(p.addr) !== is4(a) || a.zone !== '') return false;
  const m = masked(p).addr.bytes;
  const other = masked({ addr: a, bits: p.bits }).addr.bytes;
  return m.every((b, i) => b === other[i]);
}

/** Whether `inner` lies wholly inside `outer`: same family, `outer`'s bits match, and at least as long. */
export function containsPrefix(outer: Prefix, inner: Prefix): boolean {
  return inner.bits >= outer.bits && contains(outer, inner.addr);
}
