/**
 * The secure port of a `--controllers-only` process, as upstream's kube-controller-manager
 * serves it (`--secure-port`, 10257 there and here; 0 picks a free port):
 *
 * - `/healthz`, `/livez`, `/readyz` (and `/<endpoint>/<check>`) for anyone, worded as the API
 *   server's (upstream's default `--authorization-always-allow-paths`); the checks are `ping`
 *   and, with `--leader-elect`, `leaderElection`;
 * - `/metrics` in the Prometheus text format (the process's CPU, memory, open files, event loop),
 *   for a caller the core authorizes to `get` that path: authentication and authorization are
 *   delegated to the core, as upstream's `--authentication-kubeconfig` and
 *   `--authorization-kubeconfig` delegate them (a client certificate signed by the cluster CA, or
 *   a bearer token checked with a TokenReview; then a SubjectAccessReview). Refusals are the API
 *   server's 401 and 403 Statuses.
 *
 * The serving certificate is self-signed for `localhost` and 127.0.0.1, made at start (upstream
 * does the same without `--tls-cert-file`).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { type Registry, collectDefaultMetrics } from 'prom-client';
import type { CoreApi, UserInfo } from '../core';
import type { Naming } from '../naming';
import { type StatusError, unauthorized } from '../status';
import { forbiddenError } from '../authz/chain';
import { type HealthCheck, type HealthEndpoint, healthCheckAnswer, healthReport } from '../gateway/handlers/health';
import { selfSignedServing } from './certificates';

export interface ControllerServingOptions {
  core: CoreApi;
  naming: Naming;
  /** Who asks the core the TokenReviews and SubjectAccessReviews (the controller manager). */
  reviewer: UserInfo;
  host: string;
  port: number;
  /** PEM CA that client certificates must chain to (the cluster CA). */
  clientCa?: string;
  checks: readonly HealthCheck[];
  /** What `/metrics` serves; the process's own collectors are added to it. */
  registry: Registry;
  log?: (message: string) => void;
}

export interface ControllerServing {
  port: number;
  close(): Promise<void>;
}

const ANONYMOUS: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };

function statusBody(err: StatusError): string {
  return JSON.stringify(err.status);
}

export async function serveControllerManager(options: ControllerServingOptions): Promise<ControllerServing> {
  const { certPem, keyPem } = await selfSignedServing(['localhost', '127.0.0.1']);
  const { registry } = options;
  collectDefaultMetrics({ register: registry });
  const ctx = { user: options.reviewer, userAgent: 'keelson-controller-manager/secure-port' };

  /** Who is asking: a verified client certificate, a bearer token the core accepts, or anonymous; undefined for a token it refuses. */
  const authenticate = async (req: import('node:http').IncomingMessage): Promise<UserInfo | undefined> => {
    const socket = req.socket as TLSSocket;
    if (socket.authorized) {
      const subject = socket.getPeerCertificate().subject as Record<string, string | string[]> | undefined;
      const cn = subject?.CN;
      const o = subject?.O;
      if (typeof cn === 'string' && cn) return { username: cn, groups: [...(Array.isArray(o) ? o : o ? [o] : []), 'system:authenticated'] };
    }
    const header = req.headers.authorization ?? '';
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    if (!token) return ANONYMOUS;
    const group = options.naming.groups.authentication;
    const review = await options.core.create(
      { group, version: 'v1', resource: 'tokenreviews' },
      { apiVersion: `${group}/v1`, kind: 'TokenReview', spec: { token } },
      {},
      ctx,
    );
    const status = (review.object as { status?: { authenticated?: boolean; user?: UserInfo } }).status;
    if (!status?.authenticated || !status.user?.username) return undefined;
    return {
      username: status.user.username,
      groups: status.user.groups ?? [],
      ...(status.user.uid ? { uid: status.user.uid } : {}),
      ...(status.user.extra ? { extra: status.user.extra } : {}),
    };
  };

  const authorize = async (user: UserInfo, path: string): Promise<{ allowed: boolean; reason: string }> => {
    const group = options.naming.groups.authorization;
    const review = await options.core.create(
      { group, version: 'v1', resource: 'subjectaccessreviews' },
      {
        apiVersion: `${group}/v1`,
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          groups: user.groups,
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path, verb: 'get' },
        },
      },
      {},
      ctx,
    );
    const status = (review.object as { status?: { allowed?: boolean; reason?: string } }).status ?? {};
    return { allowed: status.allowed === true, reason: status.reason ?? '' };
  };

  const handle = async (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://controller-manager');
    const text = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'Content-Type': type, 'X-Content-Type-Options': 'nosniff' }).end(body);
    };
    const health = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(url.pathname);
    if (health) {
      const [, endpoint, name] = health;
      if (name) {
        const check = options.checks.find((c) => c.name === name);
        if (!check) return text(404, '404 page not found\n');
        const answer = await healthCheckAnswer(check);
        return text(answer.status, answer.body);
      }
      const report = await healthReport(endpoint as HealthEndpoint, options.checks, url.searchParams);
      for (const f of report.failures) options.log?.(`${endpoint} check failed: ${f}`);
      return text(report.status, report.body);
    }
    if (url.pathname !== '/metrics') return text(404, '404 page not found\n');
    const user = await authenticate(req);
    if (!user) return text(401, statusBody(unauthorized()), 'application/json');
    const decision = await authorize(user, url.pathname);
    if (!decision.allowed) {
      const err = forbiddenError(
        {
          user,
          verb: 'get',
          isResourceRequest: false,
          path: url.pathname,
          namespace: '',
          apiGroup: '',
          apiVersion: '',
          resource: '',
          subresource: '',
          name: '',
        },
        decision.reason,
      );
      return text(403, statusBody(err), 'application/json');
    }
    return text(200, await registry.metrics(), registry.contentType);
  };

  const server = https.createServer(
    { cert: certPem, key: keyPem, ...(options.clientCa ? { ca: options.clientCa } : {}), requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        options.log?.(`controller manager secure port: ${(err as Error).message}`);
        if (!res.headersSent)
          res
            .writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' })
            .end(`Internal Server Error: ${JSON.stringify(req.url ?? '')}: ${(err as Error).message}\n`);
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
