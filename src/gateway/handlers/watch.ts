/**
 * Watch responses: a chunked stream of `{type, object}` documents in a codec that can frame
 * them (JSON: one document per line; YAML cannot stream, as upstream, so it is 406), each
 * written as it arrives. The stream ends when the core ends it, the client goes away, or the
 * timeout passes: `timeoutSeconds`, else upstream's random 30–60 minutes (SPEC "Watch events").
 */
import type { CoreApi, ListOptions, RequestContext, ResourceTarget } from '../../core/api';
import { type Codecs, negotiateStreamOutput } from '../codecs';
import { sendHead } from '../respond';
import type { Exchange } from '../types';

/** Upstream's MinRequestTimeout: watches without timeoutSeconds last between one and two of these. */
export const MIN_REQUEST_TIMEOUT_MS = 1800 * 1000;

export function defaultWatchTimeoutMs(random: () => number = Math.random): number {
  return MIN_REQUEST_TIMEOUT_MS * (1 + random());
}

export interface WatchRequest {
  core: CoreApi;
  codecs: Codecs;
  target: ResourceTarget;
  options: ListOptions;
  ctx: RequestContext;
  /** Milliseconds until a watch without timeoutSeconds ends. */
  defaultTimeoutMs: number;
}

export async function serveWatch(exchange: Exchange, w: WatchRequest): Promise<void> {
  const output = negotiateStreamOutput(exchange.request, w.codecs);
  const stream = output.codec.stream!;
  const watch = await w.core.watch(w.target, w.options, w.ctx);
  const signal = exchange.request.signal;
  const close = () => watch.close();
  const timeoutMs = w.options.timeoutSeconds !== undefined ? Math.max(0, w.options.timeoutSeconds * 1000) : w.defaultTimeoutMs;
  const timer = setTimeout(close, timeoutMs);
  timer.unref?.();
  signal.addEventListener('abort', close, { once: true });
  const res = exchange.response;
  try {
    sendHead(exchange, 200, stream.mediaType);
    res.flushHeaders();
    if (signal.aborted) return;
    for await (const event of watch) {
      if (!res.write(stream.encodeEvent(event))) await res.drain();
      if (signal.aborted) break;
    }
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', close);
    watch.close();
    res.end();
  }
}
