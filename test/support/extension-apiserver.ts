/**
 * A real extension API server for the aggregation tests (issue 55): HTTPS on a loopback port
 * with a serving certificate for `<service>.<namespace>.svc` from a CA of its own, requiring a
 * client certificate from the front-proxy CA with an allowed common name (as an extension server
 * configured from `extension-apiserver-authentication` does), the user read from `X-Remote-User`
 * and `X-Remote-Group`. It serves `wardle.example.com/v1alpha1` with a namespaced `flunders`
 * resource (list, get, create, watch), legacy and aggregated discovery, and OpenAPI v2 and v3.
 * `mode` makes it misbehave: `hang` (never answers), `garbage` (answers with no HTTP at all).
 *
 * A request that asks to upgrade (`Connection: Upgrade`, `Upgrade: SPDY/3.1` or `websocket`) to
 * `…/flunders/<name>/exec` switches protocols and echoes every byte back; `bye` in what it reads
 * makes it answer `bye!` and close. The flunder `refuse` answers 403 instead, `plain` a 200 that
 * is no switch.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { createTestPki } from '../grpc/fixtures/certs';

export const WARDLE_GROUP = 'wardle.example.com';
export const WARDLE_VERSION = 'v1alpha1';
const GV = `${WARDLE_GROUP}/${WARDLE_VERSION}`;
export const FRONT_PROXY_CLIENT = 'front-proxy-client';

export type ExtensionMode = 'ok' | 'hang' | 'garbage';

/** One request the extension server saw, with the identity the front proxy named. */
export interface SeenRequest {
  method: string;
  url: string;
  user: string | undefined;
  groups: string[];
  /** Headers that must not reach it (the caller's credentials, impersonation). */
  authorization: string | undefined;
  impersonate: string | undefined;
  /** The common name of the client certificate the proxy presented. */
  proxyCommonName: string;
  /** The protocol asked for by a request that asks to upgrade. */
  upgrade?: string;
  /** The `X-Forwarded-For` the proxy sent. */
  forwardedFor?: string;
}

export interface ExtensionServer {
  port: number;
  /** PEM CA of the serving certificate (the APIService's caBundle, base64 of it). */
  servingCa: string;
  /** PEM front-proxy CA and the client certificate Keelson presents (`--proxy-client-*`). */
  frontProxyCa: string;
  proxyClient: { cert: string; key: string };
  seen: SeenRequest[];
  mode: ExtensionMode;
  /** Whether discovery `/apis` answers aggregated discovery (else 406 to it, as an older server). */
  aggregatedDiscovery: boolean;
  /** Connections switched by an upgrade and still open. */
  openUpgrades: number;
  /** Send a watch event to every open watch. */
  emit(type: 'ADDED' | 'MODIFIED' | 'DELETED', object: Record<string, unknown>): void;
  /** Resolves when the next request arrives (with it). */
  nextRequest(): Promise<SeenRequest>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

function flunder(namespace: string, name: string): Record<string, unknown> {
  return {
    apiVersion: GV,
    kind: 'Flunder',
    metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { reference: 'none' },
  };
}

const RESOURCE_LIST = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: GV,
  resources: [
    {
      name: 'flunders',
      singularName: 'flunder',
      namespaced: true,
      kind: 'Flunder',
      verbs: ['create', 'get', 'list', 'watch'],
      shortNames: ['fl'],
      categories: ['wardle'],
    },
    { name: 'flunders/status', singularName: '', namespaced: true, kind: 'Flunder', verbs: ['get', 'update'] },
  ],
};

function aggregatedDiscovery(apiVersion: string) {
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion,
    metadata: {},
    items: [
      {
        metadata: { name: WARDLE_GROUP },
        versions: [
          {
            version: WARDLE_VERSION,
            freshness: 'Current',
            resources: [
              {
                resource: 'flunders',
                responseKind: { group: WARDLE_GROUP, version: WARDLE_VERSION, kind: 'Flunder' },
                scope: 'Namespaced',
                singularResource: 'flunder',
                verbs: ['create', 'get', 'list', 'watch'],
                shortNames: ['fl'],
                categories: ['wardle', 'aggregated-said-so'],
              },
            ],
          },
        ],
      },
    ],
  };
}

const FLUNDER_SCHEMA = {
  description: 'A Flunder of the wardle sample.',
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
    spec: { $ref: '#/definitions/com.example.wardle.v1alpha1.FlunderSpec' },
  },
  'x-kubernetes-group-version-kind': [{ group: WARDLE_GROUP, version: WARDLE_VERSION, kind: 'Flunder' }],
};

function openApiV2() {
  const path = `/apis/${GV}/namespaces/{namespace}/flunders`;
  return {
    swagger: '2.0',
    info: { title: 'wardle', version: 'v0' },
    paths: {
      [path]: {
        get: {
          operationId: 'listWardleV1alpha1NamespacedFlunder',
          responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/com.example.wardle.v1alpha1.FlunderList' } } },
        },
      },
      // Outside its group version: left out by the aggregator.
      '/apis/other.example.com/v1/things': { get: { responses: { '200': { description: 'OK', schema: { $ref: '#/definitions/com.example.other.Thing' } } } } },
    },
    definitions: {
      'com.example.wardle.v1alpha1.Flunder': FLUNDER_SCHEMA,
      'com.example.wardle.v1alpha1.FlunderSpec': { type: 'object', properties: { reference: { type: 'string' } } },
      'com.example.wardle.v1alpha1.FlunderList': {
        type: 'object',
        properties: { items: { type: 'array', items: { $ref: '#/definitions/com.example.wardle.v1alpha1.Flunder' } } },
      },
      // Not what this server's own ObjectMeta says: the aggregator renames the extension's.
      'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { type: 'object', description: 'the extension server’s own ObjectMeta' },
      'com.example.other.Thing': { type: 'object' },
    },
  };
}

function openApiV3Document() {
  return {
    openapi: '3.0.0',
    info: { title: 'wardle', version: 'v0' },
    // Operations name the kind they serve, as upstream's documents do (kubectl explain finds the resource by them).
    paths: Object.fromEntries(
      [`/apis/${GV}/namespaces/{namespace}/flunders/{name}`, `/apis/${GV}/namespaces/{namespace}/flunders`].map((path, i) => [
        path,
        {
          get: {
            'x-kubernetes-action': i === 0 ? 'get' : 'list',
            'x-kubernetes-group-version-kind': { group: WARDLE_GROUP, version: WARDLE_VERSION, kind: 'Flunder' },
            responses: {
              '200': { description: 'OK', content: { 'application/json': { schema: { $ref: '#/components/schemas/com.example.wardle.v1alpha1.Flunder' } } } },
            },
          },
        },
      ]),
    ),
    components: {
      schemas: {
        'com.example.wardle.v1alpha1.Flunder': {
          ...FLUNDER_SCHEMA,
          properties: {
            apiVersion: { type: 'string' },
            kind: { type: 'string' },
            metadata: { type: 'object' },
            spec: { type: 'object', properties: { reference: { type: 'string', description: 'What the flunder refers to.' } } },
          },
        },
      },
    },
  };
}

export async function startExtensionServer(service: { name: string; namespace: string }): Promise<ExtensionServer> {
  const serving = await createTestPki('wardle-serving-ca');
  const frontProxy = await createTestPki('front-proxy-ca');
  const servingCert = await serving.issueServer(`CN=${service.name}.${service.namespace}.svc`, [`${service.name}.${service.namespace}.svc`]);
  const proxyClient = await frontProxy.issueClient(`CN=${FRONT_PROXY_CLIENT}`);
  const watches = new Set<ServerResponse>();
  const waiting: ((r: SeenRequest) => void)[] = [];
  const sockets = new Set<Socket>();

  /** Record a request; whether the front proxy is believed (an allowed name and a user, as requestheader-allowed-names). */
  const see = (req: IncomingMessage): boolean => {
    const peer = (req.socket as TLSSocket).getPeerCertificate();
    const proxyCommonName = String(peer?.subject?.CN ?? '');
    const seen: SeenRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      user: req.headers['x-remote-user'] as string | undefined,
      groups: req.headersDistinct['x-remote-group'] ?? [],
      authorization: req.headers.authorization,
      impersonate: req.headers['impersonate-user'] as string | undefined,
      proxyCommonName,
      upgrade: req.headers.upgrade,
      forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
    };
    ext.seen.push(seen);
    for (const resolve of waiting.splice(0)) resolve(seen);
    return proxyCommonName === FRONT_PROXY_CLIENT && Boolean(seen.user);
  };

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    const answer = (code: number, text: string, body: unknown) => {
      const json = JSON.stringify(body);
      socket.end(`HTTP/1.1 ${code} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`);
    };
    if (!see(req)) return answer(401, 'Unauthorized', { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized' });
    const name = /\/flunders\/([^/]+)\/exec$/.exec(new URL(req.url ?? '/', 'https://x').pathname)?.[1];
    const protocol = req.headers.upgrade ?? '';
    if (!name || !/^(SPDY\/3\.1|websocket)$/i.test(protocol)) {
      return answer(400, 'Bad Request', {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 400,
        reason: 'BadRequest',
        message: 'Upgrade request required',
      });
    }
    if (name === 'refuse') {
      return answer(403, 'Forbidden', {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 403,
        reason: 'Forbidden',
        message: 'the extension refuses',
      });
    }
    if (name === 'plain') return answer(200, 'OK', { kind: 'Flunder', apiVersion: GV, metadata: { name } });
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: ${protocol}\r\nX-Stream-Protocol-Version: ${req.headers['x-stream-protocol-version'] ?? ''}\r\n\r\n`,
    );
    ext.openUpgrades++;
    socket.once('close', () => ext.openUpgrades--);
    const echo = (chunk: Buffer) => {
      socket.write(chunk);
      if (chunk.includes('bye')) socket.end('bye!');
    };
    if (head.length > 0) echo(head);
    socket.on('data', echo);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (!see(req)) {
      res
        .writeHead(401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized' }));
      return;
    }
    if (ext.mode === 'hang') return;
    if (ext.mode === 'garbage') {
      req.socket.end('this is not HTTP at all\r\n\r\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'https://x');
    const json = (code: number, body: unknown, contentType = 'application/json') =>
      res.writeHead(code, { 'Content-Type': contentType }).end(JSON.stringify(body));
    const path = url.pathname;
    if (path === '/apis') {
      const accept = req.headers.accept ?? '';
      const wanted = /as=APIGroupDiscoveryList/.test(accept);
      if (wanted && ext.aggregatedDiscovery) {
        const group = /g=([^;,]+)/.exec(accept)?.[1] ?? 'apidiscovery.k8s.io';
        const version = /v=(v2(?:beta1)?)/.exec(accept)?.[1] ?? 'v2';
        return json(200, aggregatedDiscovery(`${group}/${version}`), `application/json;g=${group};v=${version};as=APIGroupDiscoveryList`);
      }
      if (wanted && !/application\/json(?![^,]*as=)/.test(accept)) return json(406, { kind: 'Status', code: 406 });
      return json(200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [
          { name: WARDLE_GROUP, versions: [{ groupVersion: GV, version: WARDLE_VERSION }], preferredVersion: { groupVersion: GV, version: WARDLE_VERSION } },
        ],
      });
    }
    if (path === `/apis/${GV}`) return json(200, RESOURCE_LIST);
    if (path === '/openapi/v2') return json(200, openApiV2());
    if (path === '/openapi/v3') return json(200, { paths: { [`apis/${GV}`]: { serverRelativeURL: `/openapi/v3/apis/${GV}?hash=ABC` } } });
    if (path === `/openapi/v3/apis/${GV}`) return json(200, openApiV3Document());
    const m = new RegExp(`^/apis/${GV.replace(/\./g, '\\.')}/namespaces/([^/]+)/flunders(?:/([^/]+))?$`).exec(path);
    if (!m)
      return json(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        code: 404,
        reason: 'NotFound',
        message: 'the server could not find the requested resource',
      });
    const [, namespace = '', name] = m;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { metadata?: { name?: string } };
        json(201, { ...flunder(namespace, body.metadata?.name ?? 'unnamed'), spec: (body as { spec?: unknown }).spec });
      });
      return;
    }
    if (name)
      return name === 'missing'
        ? json(404, {
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            code: 404,
            reason: 'NotFound',
            message: `flunders.${WARDLE_GROUP} "missing" not found`,
          })
        : json(200, flunder(namespace, name));
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: flunder(namespace, 'first') })}\n`);
      watches.add(res);
      res.on('close', () => watches.delete(res));
      return;
    }
    return json(200, {
      apiVersion: GV,
      kind: 'FlunderList',
      metadata: { resourceVersion: '7' },
      items: [flunder(namespace, 'first'), flunder(namespace, 'second')],
    });
  };

  let server: https.Server | undefined;
  const ext: ExtensionServer = {
    port: 0,
    servingCa: serving.ca,
    frontProxyCa: frontProxy.ca,
    proxyClient,
    seen: [],
    mode: 'ok',
    aggregatedDiscovery: true,
    openUpgrades: 0,
    emit(type, object) {
      for (const res of watches) res.write(`${JSON.stringify({ type, object })}\n`);
    },
    nextRequest: () => new Promise((resolve) => waiting.push(resolve)),
    async start() {
      server = https.createServer({ key: servingCert.key, cert: servingCert.cert, ca: frontProxy.ca, requestCert: true, rejectUnauthorized: true }, handle);
      server.on('upgrade', upgrade);
      server.on('connection', (s: Socket) => {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
      });
      await new Promise<void>((resolve) => server!.listen(ext.port, '127.0.0.1', resolve));
      ext.port = (server.address() as AddressInfo).port;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
        server = undefined;
      }),
  };
  await ext.start();
  return ext;
}
