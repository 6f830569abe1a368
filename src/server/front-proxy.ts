/**
 * Front-proxy authentication from the flags (docs/FRONT-PROXY.md): the request-header method of
 * the chain (`--requestheader-*`), the CA list the HTTPS handshake asks client certificates of,
 * and the `extension-apiserver-authentication` ConfigMap this server publishes for extension API
 * servers.
 */
import type { Clock } from '../clock';
import type { CoreApi, UserInfo } from '../core';
import { type RequestHeaderAuthenticator, requestHeaderAuthenticator } from '../authn';
import { ClusterAuthenticationTrustController, type ClusterAuthenticationInfo } from '../controllers';
import type { WorkQueueMetrics } from '../controllers/work-queue';
import type { Naming } from '../naming';
import { type ServerConfig, readFlagFile } from './flags';

/** `--requestheader-client-ca-file`'s bundle, when given (the flags checked it holds certificates). */
export function frontProxyCa(config: ServerConfig): string | undefined {
  return config.requestheaderClientCaFile === undefined ? undefined : readFlagFile('requestheader-client-ca-file', config.requestheaderClientCaFile);
}

/**
 * The chain's request-header method, when `--requestheader-client-ca-file` is given (upstream
 * builds none without it, whatever the header flags say). `clientCa` is the x509 method's bundle:
 * a front-proxy certificate no client CA signed is left to this method.
 */
export function frontProxyAuthenticator(config: ServerConfig, clientCa: () => string, clock: Clock): RequestHeaderAuthenticator | undefined {
  const ca = frontProxyCa(config);
  if (ca === undefined) return undefined;
  return requestHeaderAuthenticator({
    clientCa: ca,
    x509ClientCa: clientCa,
    allowedNames: config.requestheaderAllowedNames,
    usernameHeaders: config.requestheaderUsernameHeaders,
    uidHeaders: config.requestheaderUidHeaders,
    groupHeaders: config.requestheaderGroupHeaders,
    extraHeaderPrefixes: config.requestheaderExtraHeadersPrefix,
    clock,
  });
}

/**
 * The CAs the HTTPS handshake names to clients: the client CA and, as upstream adds it, the
 * front-proxy CA — a TLS client (Go's among them) offers only a certificate one of them signed.
 * Which method a certificate is good for is the chain's to say, not the handshake's.
 */
export function handshakeClientCa(clientCa: string, config: ServerConfig): string {
  const frontProxy = frontProxyCa(config);
  return frontProxy === undefined ? clientCa : `${clientCa.trimEnd()}\n${frontProxy.trimEnd()}\n`;
}

/** What this server publishes in the ConfigMap: its client CA, and its front proxy's settings when it has one. */
export function clusterAuthenticationInfo(config: ServerConfig, clientCa: string): ClusterAuthenticationInfo {
  const ca = frontProxyCa(config);
  return {
    clientCa,
    ...(ca !== undefined
      ? {
          requestHeader: {
            clientCa: ca,
            allowedNames: config.requestheaderAllowedNames,
            usernameHeaders: config.requestheaderUsernameHeaders,
            uidHeaders: config.requestheaderUidHeaders,
            groupHeaders: config.requestheaderGroupHeaders,
            extraHeaderPrefixes: config.requestheaderExtraHeadersPrefix,
          },
        }
      : {}),
  };
}

export interface AuthenticationTrustDeps {
  core: CoreApi;
  naming: Naming;
  /** Who writes the ConfigMap: the server itself, as upstream's loopback client. */
  user: UserInfo;
  clock: Clock;
  log: (message: string) => void;
  queueMetrics?: WorkQueueMetrics;
}

/** Upstream's `start-cluster-authentication-info-controller` post-start hook: every server keeps its part of the ConfigMap. */
export function startAuthenticationTrust(config: ServerConfig, clientCa: string, deps: AuthenticationTrustDeps): ClusterAuthenticationTrustController {
  const controller = new ClusterAuthenticationTrustController({ ...deps, info: clusterAuthenticationInfo(config, clientCa) });
  controller.start();
  return controller;
}
