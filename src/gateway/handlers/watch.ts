/**
 * Watch responses: a chunked stream of `{type, object}` documents in a codec that can frame
 * them (JSON: one document per line; protobuf: length-prefixed frames; CBOR: an
 * `application/cbor-seq` sequence; YAML cannot stream, as upstream, so it is 406), each written
 * as it arrives. The stream ends when the core ends it, the client goes away, or the timeout
 * passes: `timeoutSeconds`, else upstream's random 30–60 minutes (docs/API.md, "Watch").
 *
 * Events the cache shares between watchers are encoded once per format, and every watcher
 * gets the same bytes (as upstream's cacher shares its cachingObject's serializations); the
 * bytes of recent events only are kept (encodeRecent), not of every event the history holds. A watch asking for a Table or PartialObjectMetadata gets each event's object
 * converted, as upstream's watchEmbeddedEncoder does: a Table of one row, with the column
 * definitions on the first event only. Watches are never compressed (upstream streams them
 * past its compressing writer).
 */
import type { Clock } from '../../clock';
import type { CoreApi, ListOptions, RequestContext, ResourceTarget, WatchEvent, WatchStream, ResourceDefinition, IncludeObject } from '../../core';
import { encodeRecent, isShared } from '../../codecs/encode-once';
import type { Naming } from '../../naming';
import { internalError } from '../../status';
import { type Codec, type Codecs, type EndpointRestrictions, type MediaTypeOptions, convertObject, includeObjectOf, negotiateStreamOutput } from '../codecs';
import type { OpenWatches } from '../open-watches';
import { sendHead } from '../respond';
import { type ChunkWriter, type Exchange, type GatewayResponse, frameChunk } from '../types';
import type { DirectConsumer } from '../../util/async-queue';

/** Upstream's MinRequestTimeout: watches without timeoutSeconds last between one and two of these. */
export const MIN_REQUEST_TIMEOUT_MS = 1800 * 1000;

export function defaultWatchTimeoutMs(random: () => number = Math.random): number {
  return MIN_REQUEST_TIMEOUT_MS * (1 + random());
}

/** What a converting watch needs: the type, and the meta codecs that write converted objects. */
export interface WatchConversion {
  definition: ResourceDefinition;
  naming: Naming;
  metaCodecs: Codecs;
}

export interface WatchRequest {
  core: CoreApi;
  codecs: Codecs;
  target: ResourceTarget;
  options: ListOptions;
  ctx: RequestContext;
  /** Milliseconds until a watch without timeoutSeconds ends. */
  defaultTimeoutMs: number;
  /** The time the watch's timeout runs on, and converted tables' ages. */
  clock: Clock;
  /** The endpoint's restrictions (conversions it serves); default: none. */
  restrictions?: EndpointRestrictions;
  conversion?: WatchConversion;
  /** The validated `includeObject` of a Table watch. */
  includeObject?: IncludeObject | '';
  /** The gateway's open watches: this one is among them while it runs, and ends cleanly at shutdown. */
  openWatches?: OpenWatches;
  /** The events the gateway's watches last framed, which they share (FramedEvents). */
  framedEvents: FramedEvents;
  /** Called for every event written, with its size (`apiserver_watch_events_total`). */
  onSent?: (event: WatchEvent, bytes: number) => void;
}

type Frame = (event: WatchEvent) => Buffer;

/**
 * How each event becomes bytes. Plain watches share one frame per event and format; converted
 * ones convert per watcher (the first Table carries headers), written by the meta codec of the
 * same media type (upstream: no CBOR there, so a converted CBOR watch cannot be served).
 */
function framer(output: MediaTypeOptions, w: WatchRequest): Frame {
  const stream = output.codec.stream!;
  const convert = output.convert;
  if (!convert || !w.conversion) {
    const key = `watch:${stream.mediaType}`;
    return (event) => encodeRecent(event, key, (e) => stream.encodeEvent(e));
  }
  const conversion = w.conversion;
  const metaCodec: Codec | undefined = conversion.metaCodecs.get(output.codec.mediaType);
  if (!metaCodec?.stream) throw internalError(`no encoder for ${JSON.stringify(output.codec.mediaType)} exists in the requested target`);
  const metaStream = metaCodec.stream;
  const query = new URLSearchParams();
  let headersSent = false;
  return (event) => {
    if (event.type === 'ERROR') return metaStream.encodeEvent(event);
    const ctx = { definition: conversion.definition, naming: conversion.naming, now: w.clock.now(), query };
    const object = convertObject(event.object, convert, ctx, { noHeaders: headersSent, includeObject: w.includeObject ?? '' });
    if (convert.kind === 'Table') headersSent = true;
    return metaStream.encodeEvent({ type: event.type, object });
  };
}

/** The last shared event framed as a chunk, per media type: every watcher of one change asks for it in turn. */
interface FramedEvent {
  event: WatchEvent | undefined;
  framed: Buffer;
  /** The event's own bytes, without the chunk's framing. */
  size: number;
}

/**
 * The event last framed as a chunk per media type, for one gateway's watchers: made by its
 * resource handler (createResourceHandler), as those are the watchers the watch cache hands one
 * event in one pass; another server's watchers in the process have a slot of their own.
 */
export class FramedEvents {
  private readonly byMediaType = new Map<string, FramedEvent>();

  /** The slot of `mediaType`'s watches, made on first use. */
  slot(mediaType: string): FramedEvent {
    let slot = this.byMediaType.get(mediaType);
    if (!slot) this.byMediaType.set(mediaType, (slot = { event: undefined, framed: EMPTY_CHUNK, size: 0 }));
    return slot;
  }
}

/**
 * `send` for a plain watch on a chunked HTTP/1.1 response: the event's bytes framed as a chunk
 * once and written whole to each watcher's connection (`GatewayResponse.chunkWriter`). The
 * watch cache hands every watcher the same frozen event in one pass, so the last one framed is
 * the one asked for; other events (not shared) are framed for the one watcher.
 */
function framedSender(slot: FramedEvent, frame: Frame, write: ChunkWriter, onSent: WatchRequest['onSent']): (event: WatchEvent) => boolean {
  return (event) => {
    if (slot.event !== event) {
      const bytes = frame(event);
      // An empty chunk would end the body; an event is never empty, but nothing is written for one.
      if (bytes.length === 0) return true;
      const framed = frameChunk(bytes);
      if (!isShared(event)) {
        onSent?.(event, bytes.length);
        return write(framed);
      }
      slot.event = event;
      slot.framed = framed;
      slot.size = bytes.length;
    }
    onSent?.(event, slot.size);
    return write(slot.framed);
  };
}

const EMPTY_CHUNK = Buffer.alloc(0);

export async function serveWatch(exchange: Exchange, w: WatchRequest): Promise<void> {
  const req = exchange.request;
  const output = negotiateStreamOutput(req, w.codecs, w.restrictions);
  // Table options are checked before the watch starts (upstream optionsForTransform).
  if (output.convert?.kind === 'Table') w = { ...w, includeObject: includeObjectOf(req.query) };
  const frame = framer(output, w);
  const watch = await w.core.watch(w.target, w.options, w.ctx);
  const signal = req.signal;
  let over = false;
  const close = () => {
    over = true;
    watch.close();
  };
  const timeoutMs = w.options.timeoutSeconds !== undefined ? Math.max(0, w.options.timeoutSeconds * 1000) : w.defaultTimeoutMs;
  const cancelTimer = w.clock.setTimeout(close, timeoutMs);
  signal.addEventListener('abort', close, { once: true });
  const unregister = w.openWatches?.add(close);
  const res = exchange.response;
  try {
    sendHead(exchange, 200, output.codec.stream!.mediaType);
    res.flushHeaders();
    if (signal.aborted) return;
    const writeChunk = output.convert ? undefined : res.chunkWriter?.();
    const send = writeChunk
      ? framedSender(w.framedEvents.slot(output.codec.stream!.mediaType), frame, writeChunk, w.onSent)
      : (event: WatchEvent): boolean => {
          const bytes = frame(event);
          w.onSent?.(event, bytes.length);
          return res.write(bytes);
        };
    // `over` turns true on the client's abort (listener above): cheaper than asking the signal per event.
    const isOver = () => over;
    const kept = watch.direct ? await deliverDirectly(watch.direct, send, isOver, res) : await deliverIterated(watch, send, isOver, res);
    // The client stopped reading and its watch is over (the cache cut it off for falling
    // behind, or its time ran out): drop the connection rather than wait on it for ever.
    if (!kept) res.abort();
  } finally {
    cancelTimer();
    signal.removeEventListener('abort', close);
    unregister?.();
    watch.close();
    res.end();
  }
}

/**
 * Write each event of `watch` as its iterator yields it. Resolves false when the client stopped
 * reading and the watch is over (drop the connection), true when the watch ended.
 */
async function deliverIterated(watch: WatchStream, send: (event: WatchEvent) => boolean, isOver: () => boolean, res: GatewayResponse): Promise<boolean> {
  for await (const event of watch) {
    if (!send(event) && !(await drainedWhileWanted(res, () => isOver() || (watch as { closed?: boolean }).closed === true))) return false;
    if (isOver()) break;
  }
  return true;
}

/**
 * deliverIterated without a promise per event: what is buffered first, then each event within
 * the producer's push (the watch cache's pass over its watchers, so an event reaches every
 * watcher's socket in one pass, as a bare fan-out loop writes it) until the socket pushes back;
 * then wait for it to drain and start over. docs/BENCHMARKS.md, "What the mechanisms save", has
 * what it saves.
 */
async function deliverDirectly(
  direct: DirectConsumer<WatchEvent>,
  send: (event: WatchEvent) => boolean,
  isOver: () => boolean,
  res: GatewayResponse,
): Promise<boolean> {
  const abandoned = () => isOver() || direct.isClosed;
  for (;;) {
    for (let event = direct.poll(); event !== undefined; event = direct.poll()) {
      if (!send(event) && !(await drainedWhileWanted(res, abandoned))) return false;
      if (isOver()) return true;
    }
    if (direct.isClosed) {
      const failure = direct.takeFailure();
      if (failure !== undefined) throw failure;
      return true;
    }
    let pushedBack = false;
    await new Promise<void>((resolve) => {
      // A throw of `send` closes the queue with it (AsyncQueue.push), which ends this wait; it is
      // thrown here from `takeFailure` above.
      const take = (event: WatchEvent): boolean => {
        pushedBack = !send(event);
        if (!pushedBack && !isOver()) return true;
        resolve();
        return false;
      };
      // Every way out of this wait has detached already: `take` said no more, the queue closed,
      // or nothing was attached.
      if (!direct.attach(take, resolve)) resolve();
    });
    if (isOver()) return true;
    if (pushedBack && !(await drainedWhileWanted(res, abandoned))) return false;
  }
}

/** How often a watch blocked on a client that does not read checks whether it is still wanted. */
const STALL_CHECK_MS = 250;

/** Resolves true once `res` drains, false if `abandoned()` turns true first. */
async function drainedWhileWanted(res: { drain(): Promise<void> }, abandoned: () => boolean): Promise<boolean> {
  let drained = false;
  const drain = res.drain().then(() => {
    drained = true;
  });
  while (!drained) {
    if (abandoned()) return false;
    await Promise.race([drain, new Promise<void>((r) => setTimeout(r, STALL_CHECK_MS).unref?.())]);
  }
  return true;
}
