/**
 * The cell formatting helpers upstream's printers share (pkg/printers/internalversion and
 * apimachinery's duration package): ages, container lists, selectors, subjects.
 */
import type { MetaLabelSelector } from '../validation/selectors';
import { labelSelectorToString } from '../validation/selectors';

/** ObjectMeta's swagger descriptions, which most columns reuse. */
export const OBJECT_META_NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://{keyDomain}/docs/concepts/overview/working-with-objects/names#names';
export const OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.{groupDomain}/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/**
 * apimachinery duration.HumanDuration: about two significant figures (`45s`, `3m20s`, `5h`,
 * `3d4h`, `2y30d`); up to one second in the future is `0s`, further is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    const years = Math.floor(hours / 24 / 365);
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** upstream translateTimestampSince (and its MicroTime twin): `<unknown>` for an unset time. */
export function since(timestamp: unknown, now: number): string {
  if (typeof timestamp !== 'string' || timestamp === '') return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}

/** upstream layoutContainerCells: names and images, comma-joined. */
export function layoutContainerCells(containers: readonly { name?: string; image?: string }[] | undefined): { names: string; images: string } {
  const list = containers ?? [];
  return { names: list.map((c) => c.name ?? '').join(','), images: list.map((c) => c.image ?? '').join(',') };
}

/** metav1.FormatLabelSelector: the selector's string form, `<none>` when it selects nothing or everything. */
export function formatLabelSelector(selector: MetaLabelSelector | null | undefined): string {
  return labelSelectorToString(selector) || '<none>';
}

/** rbac.SubjectsStrings: users, groups and `namespace/name` service accounts, in subject order. */
export function subjectsStrings(subjects: readonly { kind?: string; name?: string; namespace?: string }[] | undefined): {
  users: string[];
  groups: string[];
  serviceAccounts: string[];
} {
  const users: string[] = [];
  const groups: string[] = [];
  const serviceAccounts: string[] = [];
  for (const s of subjects ?? []) {
    if (s.kind === 'ServiceAccount') serviceAccounts.push(`${s.namespace ?? ''}/${s.name ?? ''}`);
    else if (s.kind === 'User') users.push(s.name ?? '');
    else if (s.kind === 'Group') groups.push(s.name ?? '');
  }
  return { users, groups, serviceAccounts };
}
