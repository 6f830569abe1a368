/**
 * The names upstream's OpenAPI documents use, derived from the naming profile (no vendor
 * domain is spelled here): definition names are Go package paths with the domain reversed
 * (`<io.k8s>.api.apps.v1.ReplicaSet`, `<io.k8s>.apimachinery.pkg.apis.meta.v1.ObjectMeta`,
 * `<io.k8s>.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps`),
 * operation ids and tags use the group's name without the vendor domain
 * (`listRbacAuthorizationV1NamespacedRoleBinding`, `rbacAuthorization_v1`).
 */
import type { Naming } from '../../naming';
import type { SpecialType } from '../../schema';

export interface OpenApiNames {
  /** Definition name of a schema type (`core.v1.PodSpec`). */
  typeName(qualified: string): string;
  /** Definition name of a special type (`Time`, `Quantity`, ...), or undefined when it is inlined. */
  specialName(special: SpecialType): string | undefined;
  /** meta/v1 Patch, the schema of every patch body. */
  readonly patch: string;
  /** `apps_v1`, `core_v1`, `rbacAuthorization_v1`. */
  tag(group: string, version: string): string;
  /** `AppsV1`, `CoreV1`, `RbacAuthorizationV1`. */
  operationPrefix(group: string, version: string): string;
  /** `/api/v1`, `/apis/apps/v1`. */
  root(group: string, version: string): string;
  /** The key of a group version in the `/openapi/v3` index: `api/v1`, `apis/apps/v1`. */
  v3Path(group: string, version: string): string;
  /** Definition name of a custom resource's kind (`com.example.stable.v1.CronTab`). */
  customTypeName(group: string, version: string, kind: string): string;
}

/**
 * kube-openapi's ToValidOperationID: letters and `_` are kept (digits too, but not as the very
 * first character); any other character is dropped and capitalizes the letter after it.
 */
function toValidOperationId(s: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const letter = c.toLowerCase() !== c.toUpperCase() || c === '_';
    if (letter || (i !== 0 && c >= '0' && c <= '9')) {
      out += capitalize ? c.toUpperCase() : c;
      capitalize = false;
    } else {
      capitalize = true;
    }
  }
  return out;
}

export function openApiNames(naming: Naming): OpenApiNames {
  const reversed = naming.groupDomain.split('.').reverse().join('.');
  const apimachinery = `${reversed}.apimachinery.pkg`;
  const meta = `${apimachinery}.apis.meta.v1`;
  // apiextensions' types live in their own module upstream, not under `<io.k8s>.api`.
  const apiextensions = `${reversed}.apiextensions-apiserver.pkg.apis.apiextensions`;
  // So do the aggregator's (APIService).
  const apiregistration = `${reversed}.${naming.aggregator}.pkg.apis.apiregistration`;
  const special: Record<SpecialType, string | undefined> = {
    Time: `${meta}.Time`,
    MicroTime: `${meta}.MicroTime`,
    FieldsV1: `${meta}.FieldsV1`,
    Quantity: `${apimachinery}.api.resource.Quantity`,
    IntOrString: `${apimachinery}.util.intstr.IntOrString`,
    RawExtension: `${apimachinery}.runtime.RawExtension`,
    JSON: `${apiextensions}.v1.JSON`,
    Duration: undefined,
  };
  // Upstream trims the vendor domain from the group (`rbac.authorization.k8s.io` →
  // `rbacAuthorization`); the core group is `core`.
  const shortGroup = (group: string): string => {
    if (!group) return 'core';
    const suffix = `.${naming.groupDomain}`;
    return group.endsWith(suffix) ? group.slice(0, -suffix.length) : group;
  };
  return {
    typeName(qualified) {
      const [pkg, version, type] = qualified.split('.');
      if (pkg === 'meta') return `${meta}.${type}`;
      if (pkg === 'apiextensions') return `${apiextensions}.${version}.${type}`;
      if (pkg === 'apiregistration') return `${apiregistration}.${version}.${type}`;
      return `${reversed}.api.${pkg}.${version}.${type}`;
    },
    specialName: (s) => special[s],
    patch: `${meta}.Patch`,
    tag: (group, version) => `${toValidOperationId(shortGroup(group), false)}_${toValidOperationId(version, false)}`,
    operationPrefix: (group, version) => `${toValidOperationId(shortGroup(group), true)}${toValidOperationId(version, true)}`,
    root: (group, version) => (group ? `/apis/${group}/${version}` : `/api/${version}`),
    v3Path: (group, version) => (group ? `apis/${group}/${version}` : `api/${version}`),
    customTypeName: (group, version, kind) => `${group.split('.').reverse().join('.')}.${version}.${kind}`,
  };
}
