/**
 * The three signals of a request to a deprecated version, as the spec lists them and upstream
 * sends them: a `Warning` header with upstream's text (`<group/version> <Kind> is deprecated in
 * v1.X+, unavailable in v1.Y+; use <group/version> <Kind>`), the audit annotations
 * `<domain>/deprecated: "true"` (and `<domain>/removed-release` when a removal is planned), and
 * `apiserver_requested_deprecated_apis` set to 1.
 */
import type { Deprecation, ResourceDefinition } from '../../core';
import type { ServerMetrics } from '../../metrics';
import type { Naming } from '../../naming';
import type { Exchange, ResourceRequestInfo } from '../types';

const groupVersion = (group: string, version: string) => (group ? `${group}/${version}` : version);

export function deprecationWarning(def: ResourceDefinition, deprecation: Deprecation): string {
  let text = `${groupVersion(def.group, def.version)} ${def.kind} is deprecated in v${deprecation.deprecatedIn ?? ''}+`;
  if (deprecation.removedIn) text += `, unavailable in v${deprecation.removedIn}+`;
  const r = deprecation.replacement;
  if (r) text += `; use ${groupVersion(r.group, r.version)} ${r.kind}`;
  return text;
}

export function signalDeprecation(exchange: Exchange, def: ResourceDefinition, info: ResourceRequestInfo, naming: Naming, metrics?: ServerMetrics): void {
  const deprecation = def.deprecation!;
  if (deprecation.warning !== undefined) {
    if (deprecation.warning) exchange.warnings.push(deprecation.warning);
    return;
  }
  exchange.warnings.push(deprecationWarning(def, deprecation));
  exchange.annotate?.(`${naming.groupDomain}/deprecated`, 'true');
  if (deprecation.removedIn) exchange.annotate?.(`${naming.groupDomain}/removed-release`, deprecation.removedIn);
  metrics?.deprecatedApis.set(
    { group: def.group, version: def.version, resource: def.resource, subresource: info.subresource, removed_release: deprecation.removedIn ?? '' },
    1,
  );
}
