/**
 * Status errors of server-side apply, worded as upstream words them: the 409 listing every
 * conflicting field with its manager (docs/API.md, "Field managers and server-side apply"),
 * and the 500 upstream answers for an applied configuration its schema rejects.
 */
import { StatusError, badRequest } from '../../status';
import { pathString } from './fieldpath';
import { identityFields } from './managed';
import type { ApplyConflicts } from './updater';

/** A manager as upstream's conflict messages name it: `"kubectl" using apps/v1`, `"x" with subresource "status"`. */
export function printManager(identity: string): string {
  const who = identityFields(identity);
  if (who.manager === undefined && who.operation === undefined) return JSON.stringify(identity);
  let text = JSON.stringify(who.manager ?? '');
  if (who.subresource) text += ` with subresource ${JSON.stringify(who.subresource)}`;
  if (who.operation === 'Update') text += ` using ${who.apiVersion ?? ''}`;
  return text;
}

/** 409 Conflict: one cause per conflicting field, the message grouped by manager. */
export function conflictError(err: ApplyConflicts): StatusError {
  const { conflicts } = err;
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    message = `Apply failed with 1 conflict: conflict with ${printManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  } else {
    const byManager = new Map<string, string[]>();
    for (const c of conflicts) byManager.set(c.manager, [...(byManager.get(c.manager) ?? []), pathString(c.path)]);
    const lines: string[] = [];
    for (const manager of [...byManager.keys()].sort()) {
      lines.push(`conflicts with ${printManager(manager)}:`, ...byManager.get(manager)!.map((p) => `- ${p}`));
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Conflict', details: { causes }, code: 409 });
}

/** An error upstream does not turn into a Status of its own: 500 with the bare message and no reason. */
/**
 * An apply configuration that does not fit the schema (upstream's "failed to create typed patch
 * object", which it answers 500): the client's mistake, so a 400 with upstream's text here.
 */
export function typedPatchError(message: string): StatusError {
  return badRequest(message);
}

export function unknownError(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}
