/**
 * The one error type that leaves Keelson's core: a `Status` object shaped exactly as upstream's
 * `metav1.Status`, with a closed set of reasons. Storage errors, validation errors and anything
 * unexpected are translated into it at the boundaries (`StatusError.from`).
 */

/** Upstream's `metav1.StatusReason` values that Keelson produces. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never> | { resourceVersion?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: StatusReason | '';
  details?: StatusDetails;
  code: number;
}

/** gRPC status codes (numeric, as in `@grpc/grpc-js`'s `status` enum) kept here so the table is one table. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** One row per reason: upstream's HTTP code, and the gRPC code the core's gRPC door uses. */
export const REASON_CODES: Record<StatusReason, { http: number; grpc: number }> = {
  BadRequest: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT },
  Unauthorized: { http: 401, grpc: GrpcCode.UNAUTHENTICATED },
  Forbidden: { http: 403, grpc: GrpcCode.PERMISSION_DENIED },
  NotFound: { http: 404, grpc: GrpcCode.NOT_FOUND },
  MethodNotAllowed: { http: 405, grpc: GrpcCode.UNIMPLEMENTED },
  NotAcceptable: { http: 406, grpc: GrpcCode.INVALID_ARGUMENT },
  AlreadyExists: { http: 409, grpc: GrpcCode.ALREADY_EXISTS },
  Conflict: { http: 409, grpc: GrpcCode.ABORTED },
  Gone: { http: 410, grpc: GrpcCode.OUT_OF_RANGE },
  Expired: { http: 410, grpc: GrpcCode.OUT_OF_RANGE },
  RequestEntityTooLarge: { http: 413, grpc: GrpcCode.RESOURCE_EXHAUSTED },
  UnsupportedMediaType: { http: 415, grpc: GrpcCode.INVALID_ARGUMENT },
  Invalid: { http: 422, grpc: GrpcCode.INVALID_ARGUMENT },
  TooManyRequests: { http: 429, grpc: GrpcCode.RESOURCE_EXHAUSTED },
  InternalError: { http: 500, grpc: GrpcCode.INTERNAL },
  ServiceUnavailable: { http: 503, grpc: GrpcCode.UNAVAILABLE },
  Timeout: { http: 504, grpc: GrpcCode.DEADLINE_EXCEEDED },
};

export class StatusError extends Error {
  readonly status: Status;

  constructor(status: Status) {
    super(status.message ?? status.reason ?? 'unknown error');
    this.name = 'StatusError';
    this.status = status;
  }

  get code(): number {
    return this.status.code;
  }

  get reason(): StatusReason | '' {
    return this.status.reason ?? '';
  }

  /** Normalise anything thrown into a StatusError; unknown errors become 500 InternalError. */
  static from(err: unknown): StatusError {
    if (err instanceof StatusError) return err;
    if (isStatus(err)) return new StatusError(err);
    const message = err instanceof Error ? err.message : String(err);
    return internalError(message);
  }

  static is(err: unknown, reason?: StatusReason): err is StatusError {
    return err instanceof StatusError && (reason === undefined || err.status.reason === reason);
  }
}

export function isStatus(value: unknown): value is Status {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status' && typeof (value as { code?: unknown }).code === 'number'
  );
}

/** A group-qualified resource as upstream prints it: `replicasets.apps`, `pods` for the core group. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** A group-qualified kind as upstream prints it in Invalid errors: `ReplicaSet.apps`. */
export interface GroupKind {
  group: string;
  kind: string;
}

export function groupResourceString(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

export function groupKindString(gk: GroupKind): string {
  return gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
}

/** A Failure Status of `reason` with its HTTP code from REASON_CODES (for reasons without a helper of their own). */
export function statusError(reason: StatusReason, message: string): StatusError {
  return failure(reason, message);
}

function failure(reason: StatusReason, message: string, details?: StatusDetails, codeOverride?: number): StatusError {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code: codeOverride ?? REASON_CODES[reason].http,
  };
  if (details) status.details = details;
  return new StatusError(status);
}

export function successStatus(details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200 };
  if (details) status.details = details;
  return status;
}

// Factories. Messages follow upstream's apimachinery api/errors wording.

export function notFound(gr: GroupResource, name: string): StatusError {
  return failure('NotFound', `${groupResourceString(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource });
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return failure('AlreadyExists', `${groupResourceString(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource });
}

/** Upstream's message for a write carrying a stale resourceVersion. */
export const OPTIMISTIC_LOCK_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, cause: string): StatusError {
  return failure('Conflict', `Operation cannot be fulfilled on ${groupResourceString(gr)} "${name}": ${cause}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function invalid(gk: GroupKind, name: string, errors: readonly FieldErrorLike[]): StatusError {
  const causes: StatusCause[] = errors.map((e) => ({ reason: e.causeReason, message: e.causeMessage, field: e.field }));
  // Upstream drops repeated messages from the summary but keeps every cause.
  const list = [...new Set(errors.map((e) => e.message))];
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return failure('Invalid', `${groupKindString(gk)} "${name}" is invalid: ${summary}`, {
    name,
    group: gk.group,
    kind: gk.kind,
    causes,
  });
}

/** The shape `invalid` needs from a field error; see core/validation for the real type. */
export interface FieldErrorLike {
  field: string;
  /** `metav1.CauseType`, e.g. `FieldValueRequired`. */
  causeReason: string;
  /** The message without the field path, as upstream puts it in a cause. */
  causeMessage: string;
  /** The full message with the field path. */
  message: string;
}

export function badRequest(message: string, causes?: StatusCause[]): StatusError {
  return failure('BadRequest', message, causes ? { causes } : undefined);
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return failure('Unauthorized', message);
}

export function forbidden(gr: GroupResource, name: string, reason: string): StatusError {
  const subject = name ? `${groupResourceString(gr)} "${name}"` : groupResourceString(gr);
  return failure('Forbidden', `${subject} is forbidden: ${reason}`, { name: name || undefined, group: gr.group, kind: gr.resource });
}

export function methodNotSupported(gr: GroupResource, action: string): StatusError {
  return failure('MethodNotAllowed', `${action} is not supported on resources of kind "${groupResourceString(gr)}"`, {
    group: gr.group,
    kind: gr.resource,
  });
}

export function notAcceptable(accepted: readonly string[]): StatusError {
  return failure('NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
}

export function unsupportedMediaType(accepted: readonly string[]): StatusError {
  return failure('UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
}

export function gone(message: string): StatusError {
  return failure('Gone', message);
}

export function resourceExpired(message: string): StatusError {
  return failure('Expired', message);
}

export function requestEntityTooLarge(message: string): StatusError {
  return failure('RequestEntityTooLarge', `Request entity too large: ${message}`);
}

export function timeout(message: string, retryAfterSeconds?: number): StatusError {
  return failure('Timeout', message, retryAfterSeconds !== undefined ? { retryAfterSeconds } : undefined);
}

/** 504 for a resourceVersion the store has not reached yet (docs/API.md, "Reads and resourceVersion"). */
export function tooLargeResourceVersion(requested: number, current: number, retryAfterSeconds: number): StatusError {
  return failure('Timeout', `Too large resource version: ${requested}, current: ${current}`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds,
  });
}

export function internalError(message: string): StatusError {
  return failure('InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
}

/**
 * An error the server could not classify (upstream's StatusReasonUnknown, reason left empty):
 * what a REST handler returning a plain error becomes, e.g. an aggregate of field errors.
 */
export function unclassifiedError(message: string, code = 500): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code });
}

export function serviceUnavailable(message: string): StatusError {
  return failure('ServiceUnavailable', message);
}

export function tooManyRequests(message: string, retryAfterSeconds: number): StatusError {
  return failure('TooManyRequests', message, { retryAfterSeconds });
}

/** A 404 for a path that names nothing Keelson serves (upstream's generic "the server could not find"). */
export function pathNotFound(): StatusError {
  return failure('NotFound', 'the server could not find the requested resource', {});
}
