/**
 * Who a gRPC call runs as, and whether it may be made, decided before anything of its request
 * is validated: 401, then 403, then the request's own errors (400, 422), the HTTPS door's order
 * (src/gateway/pipeline.ts: authentication, authorization, then the handler reads the body). A
 * caller without credentials learns nothing about what a request must hold.
 *
 * Every call is authenticated by the same chain as the HTTPS door (src/authn): the bearer token
 * of the `authorization` metadata and the client certificate, checked against the client CA.
 * The user a request names (its `Caller`) is believed only from a caller allowed to act for
 * others — a gateway in front of this core, identified by its own client certificate — as
 * upstream believes an authenticating proxy's headers only from `--requestheader-allowed-names`;
 * any other caller is the user it authenticated as, and the user it names is not read.
 */
import type { X509Certificate } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type * as pb from '../gen/keelson/core/v1/core';
import type { UserInfo } from '../core';
import { type Authenticator, type Credentials, describePeer, parseCaBundle, verifyLeaf } from '../authn';
import { type AuthorizationAttributes, type Decision, forbiddenError } from '../authz';
import { type Clock, systemClock } from '../clock';
import { type StatusError, unauthorized } from '../status';
import { decodeCaller } from './codec';
import { toBuffer, type PemInput } from './tls';

export interface GrpcAuthentication {
  /** The server's authenticator chain, shared with the HTTPS door. */
  authenticator: Authenticator;
  /**
   * The server's authorizer chain, shared with the HTTPS door: each call is authorized for the
   * user it runs as (the end user, when a gateway names one), as the HTTPS door authorizes.
   */
  authorize?: (attributes: AuthorizationAttributes) => Promise<Decision>;
  /**
   * Authenticated usernames allowed to act for the user each request names (gateways in front
   * of this core). Empty: nobody may.
   */
  proxyUsers?: readonly string[];
  /** Why a call was refused as unauthenticated, for the server log (never the client). */
  onRejected?: (reason: string) => void;
  clock?: Clock;
}

/** A request's bytes as the method's message, or the 400 they earn once the caller is admitted. */
export type ReceivedRequest<Req> = { decoded: true; message: Req } | { decoded: false; error: StatusError };

/** The parts of every request admission reads, before any of it is validated. */
export interface AddressedRequest {
  target?: pb.ResourceTarget | undefined;
  caller?: pb.Caller | undefined;
}

/** What admission reads of a call itself: its metadata and its TLS peer. */
export type CallCredentials = Pick<grpc.ServerUnaryCall<unknown, unknown>, 'metadata' | 'getAuthContext'>;

/**
 * The user a call runs as, once it is authenticated and allowed `verb` on the target its
 * request names; rejects with 401 or 403 (or, for a gateway's request that names no user, 400).
 */
export type Admit = (call: CallCredentials, verb: string, request: ReceivedRequest<AddressedRequest>) => Promise<UserInfo>;

/** `'trust-caller'` believes the user each request names, for processes that own both ends. */
export function createAdmission(authentication: GrpcAuthentication | 'trust-caller', clientCa: PemInput | undefined): Admit {
  if (authentication === 'trust-caller') return async (_call, _verb, request) => namedUser(request);
  const auth = authentication;
  const cas = clientCa ? parseCaBundle(toBuffer(clientCa)) : [];
  const clock = auth.clock ?? systemClock;
  const proxies = new Set(auth.proxyUsers ?? []);
  return async (call, verb, request) => {
    // Credentials only: nothing of the request is read until the caller is known.
    const result = await auth.authenticator.authenticate(credentialsOf(call, cas, clock.now()));
    if (result.outcome !== 'authenticated') {
      auth.onRejected?.(result.outcome === 'rejected' ? result.reason : 'no opinion');
      throw unauthorized();
    }
    const user = proxies.has(result.user.username) ? namedUser(request) : result.user;
    if (auth.authorize) {
      // The target as sent, unvalidated, as the HTTPS door authorizes the path before the
      // handler checks it: a request that names nothing is authorized for nothing in particular.
      const attributes = attributesFor(user, verb, request.decoded ? request.message.target : undefined);
      const decision = await auth.authorize(attributes);
      if (decision.decision !== 'allow') throw forbiddenError(attributes, decision.reason ?? '');
    }
    return user;
  };
}

/** The user a trusted caller names: its request must decode and name one (400 otherwise). */
function namedUser(request: ReceivedRequest<AddressedRequest>): UserInfo {
  if (!request.decoded) throw request.error;
  return decodeCaller(request.message.caller).user;
}

function attributesFor(user: UserInfo, verb: string, target: pb.ResourceTarget | undefined): AuthorizationAttributes {
  return {
    user,
    verb,
    isResourceRequest: true,
    path: '',
    namespace: target?.namespace ?? '',
    apiGroup: target?.group ?? '',
    apiVersion: target?.version ?? '',
    resource: target?.resource ?? '',
    subresource: target?.subresource ?? '',
    name: target?.name ?? '',
  };
}

/**
 * The bearer token of the `authorization` metadata and the client certificate, verified against
 * the client CA. grpc-js shows a call only the certificates its TLS layer verified, so a
 * certificate from another CA looks like none at all here (the call is anonymous, or 401 with
 * anonymous requests disabled) where the HTTPS door refuses it outright.
 */
function credentialsOf(call: CallCredentials, cas: readonly X509Certificate[], now: number): Credentials {
  const credentials: Credentials = {};
  const header = call.metadata.get('authorization')[0];
  const match = typeof header === 'string' ? /^\s*bearer ([^ ]+)/i.exec(header) : null;
  if (match) credentials.token = match[1]!;
  const peer = call.getAuthContext?.()?.sslPeerCertificate;
  if (peer?.raw && cas.length > 0) {
    const { verified, error } = verifyLeaf(peer.raw, cas, now);
    const described = describePeer(peer, verified, error);
    if (described) credentials.certificate = described;
  }
  return credentials;
}
