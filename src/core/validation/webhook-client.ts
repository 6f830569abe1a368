/**
 * Where a webhook is called (upstream's `apiserver/pkg/util/webhook` validation): an https URL
 * without user information, query or fragment, or an in-cluster service with a port and a path
 * of DNS-subdomain segments. URLs are split as Go's `net/url.Parse` splits them, so that what
 * upstream accepts (a URL without a host, which then fails "host must be provided") and refuses
 * (`missing ']' in host`) is reported the same way.
 */
import { fieldErrors, type FieldError, type FieldPath } from './field-errors';
import { inclusiveRangeError, isDns1123Subdomain } from './names';

const FORM = '; desired format: https://host[/path]';

/** The parts of a URL ValidateWebhookURL looks at, as Go's url.Parse fills them. */
export interface GoUrlParts {
  scheme: string;
  /** `user` or `user:password`, as url.Userinfo.String() prints it; undefined without `@`. */
  user?: string;
  host: string;
  rawQuery: string;
  fragment: string;
}

class GoUrlError extends Error {}

function schemeOf(raw: string): { scheme: string; rest: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new GoUrlError('missing protocol scheme');
      return { scheme: raw.slice(0, i), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

/** Go's unescape: a `%` must start two hex digits; a host may hold only its allowed characters. */
function unescape(s: string, host = false): string {
  const bad = /%(?![0-9A-Fa-f]{2})/.exec(s);
  if (bad) throw new GoUrlError(`invalid URL escape ${JSON.stringify(s.slice(bad.index, bad.index + 3))}`);
  if (host) {
    const c = /[^A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"%\u0080-\uffff]/.exec(s);
    if (c) throw new GoUrlError(`invalid character ${JSON.stringify(c[0])} in host name`);
  }
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) throw new GoUrlError("missing ']' in host");
    const port = host.slice(end + 1);
    if (port !== '' && !/^:[0-9]*$/.test(port)) throw new GoUrlError(`invalid port ${JSON.stringify(port)} after host`);
    return host;
  }
  const colon = host.lastIndexOf(':');
  if (colon >= 0 && !/^:[0-9]*$/.test(host.slice(colon))) throw new GoUrlError(`invalid port ${JSON.stringify(host.slice(colon))} after host`);
  return unescape(host, true);
}

/** Go's unexported `parse` of everything before `#`. */
function parseMain(main: string): GoUrlParts {
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(main)) throw new GoUrlError('net/url: invalid control character in URL');
  const { scheme, rest: afterScheme } = schemeOf(main);
  let rest = afterScheme;
  let rawQuery = '';
  if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  const parts: GoUrlParts = { scheme: scheme.toLowerCase(), host: '', rawQuery, fragment: '' };
  if (!rest.startsWith('/')) {
    // With a scheme, the rest is opaque (`https:host`): no host.
    if (scheme === '' && rest.split('/')[0]!.includes(':')) throw new GoUrlError('first path segment in URL cannot contain colon');
    return parts;
  }
  if ((scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._~%!$&'()*+,;=:]*$/.test(userinfo)) throw new GoUrlError('net/url: invalid userinfo');
      parts.user = unescape(userinfo);
    }
    parts.host = parseHost(authority.slice(at + 1));
  }
  unescape(rest);
  return parts;
}

/** Go's `url.Parse`, reduced to the parts webhook validation reads; throws with Go's error text. */
export function parseGoUrl(raw: string): GoUrlParts {
  const hash = raw.indexOf('#');
  const main = hash < 0 ? raw : raw.slice(0, hash);
  let parts: GoUrlParts;
  try {
    parts = parseMain(main);
  } catch (err) {
    throw err instanceof GoUrlError ? new GoUrlError(`parse ${JSON.stringify(main)}: ${err.message}`) : err;
  }
  if (hash < 0) return parts;
  try {
    return { ...parts, fragment: unescape(raw.slice(hash + 1)) };
  } catch (err) {
    throw err instanceof GoUrlError ? new GoUrlError(`parse ${JSON.stringify(raw)}: ${err.message}`) : err;
  }
}

/** upstream ValidateWebhookURL (with forceHttps, as admission webhooks use it). */
export function validateWebhookUrl(path: FieldPath, url: string): FieldError[] {
  let u: GoUrlParts;
  try {
    u = parseGoUrl(url);
  } catch (err) {
    return [fieldErrors.required(path, `url must be a valid URL: ${(err as Error).message}${FORM}`)];
  }
  const errs: FieldError[] = [];
  if (u.scheme !== 'https') errs.push(fieldErrors.invalid(path, u.scheme, `'https' is the only allowed URL scheme${FORM}`));
  if (u.host.length === 0) errs.push(fieldErrors.invalid(path, u.host, `host must be provided${FORM}`));
  if (u.user !== undefined) errs.push(fieldErrors.invalid(path, u.user, 'user information is not permitted in the URL'));
  if (u.fragment.length !== 0) errs.push(fieldErrors.invalid(path, u.fragment, 'fragments are not permitted in the URL'));
  if (u.rawQuery.length !== 0) errs.push(fieldErrors.invalid(path, u.rawQuery, 'query parameters are not permitted in the URL'));
  return errs;
}

/** upstream ValidateWebhookService: name, namespace, a valid port (defaulted to 443) and path segments. */
export function validateWebhookService(path: FieldPath, service: { name?: string; namespace?: string; path?: string | null; port?: number | null }): FieldError[] {
  const errs: FieldError[] = [];
  if (!service.name) errs.push(fieldErrors.required(path.child('name'), 'service name is required'));
  if (!service.namespace) errs.push(fieldErrors.required(path.child('namespace'), 'service namespace is required'));
  const port = service.port ?? 0;
  if (!(port >= 1 && port <= 65535)) errs.push(fieldErrors.invalid(path.child('port'), port, `port is not valid: ${inclusiveRangeError(1, 65535)}`));
  const urlPath = service.path;
  if (urlPath === undefined || urlPath === null || urlPath === '/' || urlPath === '') return errs;
  const at = path.child('path');
  if (urlPath === '//') return [...errs, fieldErrors.invalid(at, urlPath, 'segment[0] may not be empty')];
  if (!urlPath.startsWith('/')) errs.push(fieldErrors.invalid(at, urlPath, "must start with a '/'"));
  let check = urlPath.slice(1);
  if (check.endsWith('/')) check = check.slice(0, -1);
  check.split('/').forEach((step, i) => {
    if (step.length === 0) {
      errs.push(fieldErrors.invalid(at, urlPath, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of isDns1123Subdomain(step)) errs.push(fieldErrors.invalid(at, urlPath, `segment[${i}]: ${failure}`));
  });
  return errs;
}
