/** TLS material for both ends of the gRPC door. */
import { isIP } from 'node:net';
import * as grpc from '@grpc/grpc-js';

/** PEM text, as a string or the bytes of a file. */
export type PemInput = Buffer | string;

export interface GrpcClientTlsOptions {
  /** PEM CA bundle the server certificate must chain to; the system roots when absent. */
  ca?: PemInput;
  /** Client certificate and key, for servers that require one (mutual TLS). */
  cert?: PemInput;
  key?: PemInput;
  /** Name to verify the server certificate against, when it differs from the address's host. */
  serverName?: string;
}

export function toBuffer(pem: PemInput): Buffer {
  return typeof pem === 'string' ? Buffer.from(pem, 'utf8') : pem;
}

export function clientCredentials(tls: GrpcClientTlsOptions | undefined): grpc.ChannelCredentials {
  if (!tls) return grpc.credentials.createInsecure();
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    throw new Error('grpc client: a client certificate needs both cert and key');
  }
  return grpc.credentials.createSsl(
    tls.ca !== undefined ? toBuffer(tls.ca) : null,
    tls.key !== undefined ? toBuffer(tls.key) : null,
    tls.cert !== undefined ? toBuffer(tls.cert) : null,
  );
}

/**
 * The name to verify a core's serving certificate against when it is dialled at `address`
 * (`host:port`): for an IP address, `localhost` (the generated serving certificate carries it,
 * and the name is what grpc-js checks); for a host name, that name (undefined).
 */
export function serverNameFor(address: string): string | undefined {
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  return isIP(host) ? 'localhost' : undefined;
}
