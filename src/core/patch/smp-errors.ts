/**
 * Errors of patch application and the statuses upstream's patch handler turns them into
 * (its interpretStrategicMergePatchError and JSON patcher): malformed directives are
 * 400s with the error's text, list-of-lists and retainKeys mismatches are 422s with the generic
 * "rejected" message. Anything else (a list item without its merge key, a directive of the wrong
 * type, lists of mixed element types) leaves upstream as a bare 500; it is the client's patch
 * that is wrong, so here it is a 400 with upstream's text.
 */
import { StatusError, badRequest } from '../../status';
import { goPrint, goType } from '../../codecs/go-values';

export type SmpErrorKind = 'badRequest' | 'unprocessable' | 'internal';

export class SmpError extends Error {
  constructor(
    readonly kind: SmpErrorKind,
    message: string,
  ) {
    super(message);
  }

  static badRequest(message: string): SmpError {
    return new SmpError('badRequest', message);
  }

  static unprocessable(message: string): SmpError {
    return new SmpError('unprocessable', message);
  }

  static internal(message: string): SmpError {
    return new SmpError('internal', message);
  }
}

// upstream's mergepatch errors.
export const ERR_BAD_PATCH_FORMAT_PRIMITIVE_LIST = 'invalid patch format of primitive list';
export const ERR_BAD_PATCH_FORMAT_RETAIN_KEYS = 'invalid patch format of retainKeys';
export const ERR_BAD_PATCH_FORMAT_SET_ELEMENT_ORDER = 'invalid patch format of setElementOrder list';
export const ERR_NO_LIST_OF_LISTS = 'lists of lists are not supported';

export function errNoMergeKey(m: unknown, key: string): SmpError {
  return SmpError.internal(`map: ${goPrint(m)} does not contain declared merge key: ${key}`);
}

export function errBadArgType(expected: string, actual: unknown): SmpError {
  return SmpError.internal(`expected a ${expected}, but received a ${goType(actual)}`);
}

export function errBadPatchType(directive: unknown, m: unknown): SmpError {
  return SmpError.internal(`unknown patch type: ${goPrint(directive)} in map: ${goPrint(m)}`);
}

/** upstream's NewGenericServerResponse(422, ...): the detail is not shown. */
export function rejectedRequest(): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server rejected our request due to an error in our request',
    reason: 'Invalid',
    details: {},
    code: 422,
  });
}

export function toStatusError(err: SmpError): StatusError {
  switch (err.kind) {
    case 'badRequest':
      return badRequest(err.message);
    case 'unprocessable':
      return rejectedRequest();
    case 'internal':
      return badRequest(err.message);
  }
}
