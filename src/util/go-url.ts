/**
 * URLs as Go's `net/url` reads them: `url.Parse` and `url.ParseRequestURI` with their error words,
 * wrapped as `url.Error` words them (`parse "https://a:b:c/": invalid port ":c" after host`), and
 * the accessors `Hostname()`, `Port()`, `EscapedPath()` and `Query()`. For webhook URL validation
 * and Kubernetes' CEL `url` library, which both must accept and refuse what upstream does.
 */

export interface GoUrl {
  scheme: string;
  opaque: string;
  /** The userinfo before `@`, unescaped; undefined without one. */
  user?: string;
  host: string;
  path: string;
  rawPath: string;
  rawQuery: string;
  fragment: string;
}

export class UrlError extends Error {}

type Mode = 'path' | 'host' | 'query' | 'userinfo' | 'fragment';

const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

/** Whether Go's url package escapes byte `c` in a component of kind `mode`. */
function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if (mode === 'host' && '!$&\'()*+,;=:[]<>"'.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    if (mode === 'path') return c === '?';
    if (mode === 'userinfo') return c === '@' || c === '/' || c === '?' || c === ':';
    if (mode === 'query') return true;
  }
  return true;
}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

/** Go's unescape: `%XX` decoded (as UTF-8 bytes), `+` a space in query components. */
function unescapePart(s: string, mode: Mode): string {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; ) {
    const c = String.fromCodePoint(s.codePointAt(i)!);
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) {
        const bad = s.slice(i, i + 3);
        throw new UrlError(`invalid URL escape ${JSON.stringify(bad)}`);
      }
      const value = parseInt(s.slice(i + 1, i + 3), 16);
      // In a host, an escape may only stand for a byte of a multi-byte character (or "%25").
      if (mode === 'host' && value < 0x80 && s.slice(i, i + 3) !== '%25') throw new UrlError(`invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`);
      bytes.push(value);
      i += 3;
      continue;
    }
    if (mode === 'host' && c.charCodeAt(0) < 0x80 && shouldEscape(c, 'host')) throw new UrlError(`invalid character ${JSON.stringify(c)} in host name`);
    if (c === '+' && mode === 'query') bytes.push(0x20);
    else bytes.push(...Buffer.from(c, 'utf8'));
    i += c.length;
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Go's `url.PathUnescape`: `%XX` decoded, `+` left as it is; throws `UrlError` on a bad escape. */
export function pathUnescape(s: string): string {
  return unescapePart(s, 'path');
}

/** Go's escape for a path (what EscapedPath returns when the raw path is not usable). */
function escapePath(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && !shouldEscape(c, 'path') ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Go's validEncoded: every byte either allowed in a path as it is, or part of an escape. */
function validEncodedPath(s: string): boolean {
  for (const c of s) {
    if ("!$&'()*+,;=:@[]%".includes(c)) continue;
    if (c.charCodeAt(0) >= 0x80 || shouldEscape(c, 'path')) return false;
  }
  return true;
}

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

function getScheme(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new UrlError('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(end + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${JSON.stringify(colonPort)} after host`);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) throw new UrlError(`invalid port ${JSON.stringify(host.slice(colon))} after host`);
  }
  return unescapePart(host, 'host');
}

function parseAuthority(authority: string): { host: string; user?: string } {
  const at = authority.lastIndexOf('@');
  const host = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return { host };
  const userinfo = authority.slice(0, at);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new UrlError('net/url: invalid userinfo');
  return { host, user: unescapePart(userinfo, 'userinfo') };
}

/** Go's parse(rawURL, viaRequest), without the fragment (cut off by the caller). */
function parse(raw: string, viaRequest: boolean): GoUrl {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  const url: GoUrl = { scheme: '', opaque: '', host: '', path: '', rawPath: '', rawQuery: '', fragment: '' };
  if (raw === '*') return { ...url, path: '*' };
  const { scheme, rest: afterScheme } = getScheme(raw);
  url.scheme = scheme.toLowerCase();
  let rest = afterScheme;
  if (rest.endsWith('?') && rest.split('?').length === 2) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      url.rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  if (!rest.startsWith('/')) {
    if (url.scheme !== '') return { ...url, opaque: rest };
    if (viaRequest) throw new UrlError('invalid URI for request');
    const segment = rest.split('/')[0]!;
    if (segment.includes(':')) throw new UrlError('first path segment in URL cannot contain colon');
  }
  if ((url.scheme !== '' || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    const { host, user } = parseAuthority(authority);
    url.host = host;
    if (user !== undefined) url.user = user;
  }
  url.path = unescapePart(rest, 'path');
  url.rawPath = escapePath(url.path) === rest ? '' : rest;
  return url;
}

/** `url.Error`'s words: the operation, the quoted URL and the cause. */
function wrapped(raw: string, fn: () => GoUrl): GoUrl {
  try {
    return fn();
  } catch (err) {
    if (err instanceof UrlError) throw new UrlError(`parse ${JSON.stringify(raw)}: ${err.message}`);
    throw err;
  }
}

/** Go's `url.Parse`: the fragment cut off first, then unescaped. */
export function parseUrl(raw: string): GoUrl {
  const hash = raw.indexOf('#');
  const main = hash >= 0 ? raw.slice(0, hash) : raw;
  const url = wrapped(main, () => parse(main, false));
  if (hash < 0) return url;
  return wrapped(raw, () => ({ ...url, fragment: unescapePart(raw.slice(hash + 1), 'fragment') }));
}

/** Go's `url.ParseRequestURI` (no fragment; an absolute URI or an absolute path). */
export function parseRequestUri(raw: string): GoUrl {
  return wrapped(raw, () => parse(raw, true));
}

/** What the CEL `url(<string>)` keeps: checked by ParseRequestURI, kept as Parse reads it; or the error upstream's library reports. */
export function parseRequestUrl(raw: string): GoUrl {
  try {
    parseRequestUri(raw);
    return parseUrl(raw);
  } catch (err) {
    if (err instanceof UrlError) throw new UrlError(`URL parse error during conversion from string: ${err.message}`);
    throw err;
  }
}

export function isRequestUrl(raw: string): boolean {
  try {
    parse(raw, true);
    return true;
  } catch (err) {
    if (err instanceof UrlError) return false;
    throw err;
  }
}

/** Go's splitHostPort as Hostname and Port use it. */
function splitHostPort(hostPort: string): { host: string; port: string } {
  let host = hostPort;
  let port = '';
  const colon = hostPort.lastIndexOf(':');
  if (colon >= 0 && validOptionalPort(hostPort.slice(colon))) {
    host = hostPort.slice(0, colon);
    port = hostPort.slice(colon + 1);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port };
}

export const hostname = (u: GoUrl) => splitHostPort(u.host).host;
export const port = (u: GoUrl) => splitHostPort(u.host).port;

export function escapedPath(u: GoUrl): string {
  if (u.rawPath !== '' && validEncodedPath(u.rawPath)) {
    try {
      if (unescapePart(u.rawPath, 'path') === u.path) return u.rawPath;
    } catch {
      // Not usable: escape the path instead.
    }
  }
  if (u.path === '*') return '*';
  return escapePath(u.path);
}

/** Go's ParseQuery, keeping what parses (keys with `;` and bad escapes are skipped, as Query() does). */
export function query(u: GoUrl): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const pair of u.rawQuery.split('&')) {
    if (pair === '' || pair.includes(';')) continue;
    const eq = pair.indexOf('=');
    let key: string;
    let value: string;
    try {
      key = unescapePart(eq >= 0 ? pair.slice(0, eq) : pair, 'query');
      value = unescapePart(eq >= 0 ? pair.slice(eq + 1) : '', 'query');
    } catch {
      continue;
    }
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}
