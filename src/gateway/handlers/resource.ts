/**
 * The resource handler: one CoreApi call per request. The response format is negotiated and
 * the body's format checked before the core is called (DESIGN.md "Request path" 1), query
 * parameters are decoded and validated into the core's option types, and results map to
 * upstream's status codes: create 201, update/patch 200 or 201 when they created, delete 200
 * or 202 as the core says (SPEC "Endpoints").
 */
import type { CoreApi, GetOptions, RequestContext } from '../../core/api';
import type { Naming } from '../../naming';
import { MAX_REQUEST_BODY_BYTES, bodyCodec, decodeObject, decodePatch, patchTypeOf, readOptionalBody } from '../body';
import { type Codecs, negotiateOutput } from '../codecs';
import { parseDeleteOptions, parseListOptions, parseWriteOptions, queryString } from '../options';
import type { ResourceIndex } from '../resource-index';
import { writeObject } from '../respond';
import { type Exchange, type ResourceRequestInfo, userOf } from '../types';
import { resolveResourceRoute } from './resource-route';
import { defaultWatchTimeoutMs, serveWatch } from './watch';

export interface ResourceHandlerOptions {
  core: CoreApi;
  codecs: Codecs;
  naming: Naming;
  index: ResourceIndex;
  /** Milliseconds a watch without timeoutSeconds lasts; defaults to upstream's random 30–60 minutes. */
  watchTimeoutMs?: () => number;
}

export type ResourceHandler = (exchange: Exchange, info: ResourceRequestInfo) => Promise<void>;

export function createResourceHandler(options: ResourceHandlerOptions): ResourceHandler {
  const { core, codecs, naming, index } = options;
  const watchTimeout = options.watchTimeoutMs ?? (() => defaultWatchTimeoutMs());

  return async (exchange, info) => {
    const req = exchange.request;
    const route = resolveResourceRoute(info, req.method, index);
    const { target } = route;
    const ctx: RequestContext = { user: userOf(exchange), warnings: exchange.warnings, signal: req.signal };
    if (req.headers['user-agent']) ctx.userAgent = req.headers['user-agent'];
    const output = negotiateOutput(req, codecs);

    switch (route.action) {
      case 'get': {
        const getOptions: GetOptions = {};
        const rv = queryString(req.query, 'resourceVersion');
        if (rv) getOptions.resourceVersion = rv;
        writeObject(exchange, 200, await core.get(target, getOptions, ctx), output);
        return;
      }
      case 'list':
      case 'watch': {
        const parsed = parseListOptions(req.query, naming);
        if (route.action === 'list' && !parsed.watch) {
          writeObject(exchange, 200, await core.list(target, parsed.options, ctx), output);
          return;
        }
        const listOptions = { ...parsed.options };
        if (route.watchName !== undefined) {
          const byName = `metadata.name=${route.watchName}`;
          listOptions.fieldSelector = listOptions.fieldSelector ? `${listOptions.fieldSelector},${byName}` : byName;
        }
        await serveWatch(exchange, { core, codecs, target, options: listOptions, ctx, defaultTimeoutMs: watchTimeout() });
        return;
      }
      case 'create':
      case 'update': {
        const codec = bodyCodec(req, codecs);
        const body = await req.readBody(MAX_REQUEST_BODY_BYTES);
        const writeOptions = parseWriteOptions(req.query, naming, route.action === 'create' ? 'CreateOptions' : 'UpdateOptions');
        const object = decodeObject(codec, body);
        if (route.action === 'create') {
          const result = await core.create(target, object, writeOptions, ctx);
          writeObject(exchange, 201, result.object, output);
        } else {
          const result = await core.update(target, object, writeOptions, ctx);
          writeObject(exchange, result.created ? 201 : 200, result.object, output);
        }
        return;
      }
      case 'patch': {
        const patchType = patchTypeOf(req.headers['content-type']);
        const body = await req.readBody(MAX_REQUEST_BODY_BYTES);
        const writeOptions = parseWriteOptions(req.query, naming, 'PatchOptions', patchType);
        const result = await core.patch(target, decodePatch(patchType, body), writeOptions, ctx);
        writeObject(exchange, result.created ? 201 : 200, result.object, output);
        return;
      }
      case 'delete': {
        const deleteOptions = parseDeleteOptions(await readOptionalBody(req, codecs), req.query, naming);
        const result = await core.delete(target, deleteOptions, ctx);
        writeObject(exchange, result.httpStatus, result.object, output);
        return;
      }
      case 'deletecollection': {
        const parsed = parseListOptions(req.query, naming);
        const deleteOptions = parseDeleteOptions(await readOptionalBody(req, codecs), req.query, naming);
        writeObject(exchange, 200, await core.deleteCollection(target, parsed.options, deleteOptions, ctx), output);
        return;
      }
    }
  };
}
