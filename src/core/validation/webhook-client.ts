/**
 * Where a webhook is called (upstream's `apiserver/pkg/util/webhook` validation): an https URL
 * without user information, query or fragment, or an in-cluster service with a port and a path
 * of DNS-subdomain segments. URLs are split as Go's `net/url.Parse` splits them (util/go-url.ts),
 * so that what upstream accepts (a URL without a host, which then fails "host must be provided")
 * and refuses (`missing ']' in host`) is reported the same way.
 */
import { fieldErrors, type FieldError, type FieldPath } from './field-errors';
import { inclusiveRangeError, isDns1123Subdomain } from './names';
import { type GoUrl, parseUrl } from '../../util/go-url';

const FORM = '; desired format: https://host[/path]';

/** upstream ValidateWebhookURL (with forceHttps, as admission webhooks use it). */
export function validateWebhookUrl(path: FieldPath, url: string): FieldError[] {
  let u: GoUrl;
  try {
    u = parseUrl(url);
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
export function validateWebhookService(
  path: FieldPath,
  service: { name?: string; namespace?: string; path?: string | null; port?: number | null },
): FieldError[] {
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
