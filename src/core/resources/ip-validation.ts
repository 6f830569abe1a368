/**
 * Upstream's IP checks for API fields (apimachinery's IsValidIP, IsValidIPv4Address,
 * IsValidIPv6Address and core's ValidateNonSpecialIP), which parse with netutils'
 * ParseIPSloppy: Go 1.16's parser, where an IPv4 octet may carry leading zeros (read as decimal).
 */
import { type Addr, is4, is4In6, isLinkLocalMulticast, isLinkLocalUnicast, isLoopback, isUnspecified, NetipError, parseAddr } from '../../util/go-netip';
import { fieldErrors, type FieldError, type FieldPath } from '../validation/field-errors';

/** The octets of a dotted quad written without their leading zeros, as the sloppy parser reads them. */
function withoutLeadingZeros(text: string): string {
  return text.replace(/(^|[.:])0+(\d)/g, (match, sep: string, digit: string, at: number) => {
    // Only IPv4 octets: a group after ':' is hex and keeps its zeros unless a dotted quad follows.
    if (sep === ':' && !/^[0-9]+\./.test(text.slice(at + 1))) return match;
    return `${sep}${digit}`;
  });
}

/** netutils.ParseIPSloppy; undefined for what it refuses. */
export function parseIPSloppy(text: string): Addr | undefined {
  if (text === '' || text.includes('%')) return undefined;
  try {
    return parseAddr(text.includes('.') ? withoutLeadingZeros(text) : text);
  } catch (err) {
    if (err instanceof NetipError) return undefined;
    throw err;
  }
}

/** An IPv4 address or an IPv4-mapped IPv6 one (Go's `To4() != nil`). */
const isV4 = (a: Addr) => is4(a) || is4In6(a);

/** apimachinery's IsValidIP. */
export function ipErrors(text: string): string[] {
  return parseIPSloppy(text) ? [] : ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
}

/** apimachinery's IsValidIPv4Address. */
export function validateIPv4Address(text: string, path: FieldPath): FieldError[] {
  const ip = parseIPSloppy(text);
  return ip && isV4(ip) ? [] : [fieldErrors.invalid(path, text, 'must be a valid IPv4 address')];
}

/** apimachinery's IsValidIPv6Address. */
export function validateIPv6Address(text: string, path: FieldPath): FieldError[] {
  const ip = parseIPSloppy(text);
  return ip && !isV4(ip) ? [] : [fieldErrors.invalid(path, text, 'must be a valid IPv6 address')];
}

/**
 * core's ValidateNonSpecialIP, for Endpoints, EndpointSlices and external IPs: no unspecified,
 * loopback or link-local address (those belong to the node, not to a backend).
 */
export function validateNonSpecialIP(text: string, path: FieldPath): FieldError[] {
  const ip = parseIPSloppy(text);
  if (!ip) return [fieldErrors.invalid(path, text, 'must be a valid IP address')];
  const errs: FieldError[] = [];
  const v = isV4(ip) ? parseAddr(ip.bytes.slice(-4).join('.')) : ip;
  if (isUnspecified(v)) errs.push(fieldErrors.invalid(path, text, `may not be unspecified (${text})`));
  if (isLoopback(v)) errs.push(fieldErrors.invalid(path, text, 'may not be in the loopback range (127.0.0.0/8, ::1/128)'));
  if (isLinkLocalUnicast(v)) errs.push(fieldErrors.invalid(path, text, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)'));
  if (isLinkLocalMulticast(v)) errs.push(fieldErrors.invalid(path, text, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)'));
  return errs;
}
