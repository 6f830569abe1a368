/**
 * The core's gRPC door (`keelson.core.v1.Core`): a server that exposes any CoreApi, and a
 * client that is a CoreApi. Wire design: envelope.ts (objects), errors.ts (failures),
 * codec.ts and enums.ts (everything else), tls.ts (credentials).
 */
export { startGrpcCoreServer, type GrpcCoreServer, type GrpcCoreServerOptions, type GrpcServerTlsOptions } from './server';
export { createGrpcCoreClient, type GrpcCoreClient, type GrpcCoreClientOptions } from './client';
export type { GrpcClientTlsOptions, PemInput } from './tls';
export { serverNameFor } from './tls';
export { STATUS_TRAILER_KEY } from './errors';
