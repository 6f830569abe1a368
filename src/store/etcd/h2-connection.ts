/**
 * The client side of one HTTP/2 connection (RFC 9113), as the etcd client needs it for gRPC:
 * streams opened with a prepared header block, request bodies sent within the peer's flow-control
 * windows, responses handed over frame by frame, pings, GOAWAY and resets. Nothing else: no
 * server push (disabled in the preface), no priorities, no upgrade from HTTP/1.1.
 *
 * Why not node:http2: each of its client streams is a Duplex stream with its own handle in
 * nghttp2, and a unary call cost 51–66 µs of client CPU at 64 calls in flight. Framing the same
 * calls here costs ~9 µs (docs/BENCHMARKS.md), and a create on etcd makes one.
 *
 * Received data is consumed at once (the caller keeps what it needs), so this side's windows are
 * topped up as frames arrive: a stream's once half its window is used, the connection's likewise.
 * What one event-loop turn writes goes out in one socket write at the turn's end. A stream past
 * the peer's SETTINGS_MAX_CONCURRENT_STREAMS is refused, not queued: etcd sets no practical limit.
 */
import type { Socket } from 'node:net';
import { HpackDecoder, HpackError } from './hpack';

/** HTTP/2 error codes (section 7) this side sends or names. */
export const H2Error = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  STREAM_CLOSED: 0x5,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  CANCEL: 0x8,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const;

const FRAME_DATA = 0x0;
const FRAME_HEADERS = 0x1;
const FRAME_RST_STREAM = 0x3;
const FRAME_SETTINGS = 0x4;
const FRAME_PUSH_PROMISE = 0x5;
const FRAME_PING = 0x6;
const FRAME_GOAWAY = 0x7;
const FRAME_WINDOW_UPDATE = 0x8;
const FRAME_CONTINUATION = 0x9;

const FLAG_END_STREAM = 0x1;
const FLAG_ACK = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;
const FLAG_PRIORITY = 0x20;

const SETTINGS_HEADER_TABLE_SIZE = 0x1;
const SETTINGS_ENABLE_PUSH = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const DEFAULT_WINDOW = 65_535;
const MAX_WINDOW = 0x7fffffff;
/** The largest frame this side accepts (SETTINGS_MAX_FRAME_SIZE left at its default). */
const MAX_FRAME_IN = 16_384;
const MAX_STREAM_ID = 0x7fffffff;
/**
 * The most one header block may take, HEADERS and CONTINUATION frames together. etcd's are a few
 * dozen bytes; without a bound, a peer that never ends a block (a CONTINUATION flood) would grow
 * the gathered fragments for as long as it sends.
 */
export const MAX_HEADER_BLOCK = 1024 * 1024;
const EMPTY = Buffer.alloc(0);

/** What a stream reports: header blocks and data as they arrive, then its end, once. */
export interface H2StreamHandler {
  /** A header block (response headers, or trailers when `endStream`), as name then value. */
  onHeaders(fields: string[], endStream: boolean): void;
  /** A DATA frame's payload, padding removed; a view the handler may keep. */
  onData(data: Buffer, endStream: boolean): void;
  /**
   * The stream ended without the peer finishing it: reset by the peer (`code`), refused by a
   * GOAWAY, or the connection failed. Not called after the peer's END_STREAM or `cancel()`.
   */
  onAbort(reason: string, code: number): void;
}

/** Events of the connection as a whole. */
export interface H2ConnectionEvents {
  /** Connected (and, for TLS, `h2` agreed), before any frame of the peer's is read. */
  onConnect?(): void;
  /** The peer sent GOAWAY: no new streams; those it took still finish. */
  onGoaway?(code: number): void;
  /** The connection is gone; every open stream has been aborted. */
  onClose?(err?: Error): void;
}

interface Stream {
  id: number;
  handler: H2StreamHandler;
  sendWindow: number;
  /** Request bytes waiting for window, and whether the request ends with them. */
  pending?: Buffer;
  pendingEnd: boolean;
  localEnded: boolean;
  /** Received bytes not yet given back with a WINDOW_UPDATE. */
  unacked: number;
}

export class H2Stream {
  constructor(
    private readonly connection: H2Connection,
    /** @internal */ readonly state: Stream,
  ) {}

  /** Resets the stream (CANCEL); nothing more is reported to its handler. */
  cancel(): void {
    this.connection.reset(this.state, H2Error.CANCEL);
  }
}

export class H2Connection {
  private readonly decoder = new HpackDecoder();
  private readonly streams = new Map<number, Stream>();
  /** Streams with bytes waiting for window, in the order they blocked. */
  private readonly blocked = new Set<Stream>();
  private nextId = 1;
  private sendWindow = DEFAULT_WINDOW;
  private peerInitialWindow = DEFAULT_WINDOW;
  private peerMaxFrame = 16_384;
  private peerMaxStreams = Infinity;
  private receivedUnacked = 0;
  /** A frame cut off by the end of the last read, sized to the whole frame once its header is in; `carried` bytes of it so far. */
  private carry?: Buffer;
  private carried = 0;
  /** A header block spread over HEADERS and CONTINUATION frames, while it is incomplete. */
  private continuing?: { streamId: number; endStream: boolean; fragments: Buffer[]; size: number };
  private readonly pings: ((err?: Error) => void)[] = [];
  /** Frames written this event-loop turn, sent together when it ends (see `write`). */
  private output: Buffer[] = [];
  private outputBytes = 0;
  private goawayAt = Infinity;
  private closing = false;
  private ended = false;
  private connectedFlag = false;

  constructor(
    private readonly socket: Socket,
    private readonly events: H2ConnectionEvents,
    private readonly windows: { stream: number; connection: number },
    /** The event `socket` emits once it can carry HTTP/2 ('connect', or 'secureConnect' for TLS). */
    connectEvent: 'connect' | 'secureConnect',
    /** Checked at connect (for TLS: that ALPN chose h2); an error fails the connection. */
    check?: () => Error | undefined,
  ) {
    socket.setNoDelay(true);
    const settings = this.frame(FRAME_SETTINGS, 0, 0, 18);
    let at = 9;
    at = settings.writeUInt16BE(SETTINGS_ENABLE_PUSH, at);
    at = settings.writeUInt32BE(0, at);
    at = settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, at);
    at = settings.writeUInt32BE(windows.stream, at);
    at = settings.writeUInt16BE(SETTINGS_HEADER_TABLE_SIZE, at);
    settings.writeUInt32BE(4096, at);
    const grow = this.windowUpdate(0, windows.connection - DEFAULT_WINDOW);
    // Written at once; the socket holds it until it connects.
    this.write(Buffer.concat([PREFACE, settings, grow]));
    socket.once(connectEvent, () => {
      const err = check?.();
      if (err) return this.destroy(err);
      this.connectedFlag = true;
      this.events.onConnect?.();
    });
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (err) => this.destroy(socketError(err)));
    socket.on('close', () => this.destroy(new Error('the connection to etcd closed')));
  }

  /** Whether the transport connected (before that, nothing sent can have reached the peer). */
  get connected(): boolean {
    return this.connectedFlag;
  }

  /** Whether new streams can still be opened. */
  get usable(): boolean {
    return !this.ended && !this.closing && this.goawayAt === Infinity && this.nextId <= MAX_STREAM_ID;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * Opens a stream with `headerBlock` (HPACK, fitting one frame) and, when given, the first of its
   * body (one array, parts sent one after the other, or a `SizedBody` written in place) in the
   * same write. Throws when the connection cannot take a new stream.
   */
  request(headerBlock: Buffer, handler: H2StreamHandler, body?: Uint8Array | readonly Uint8Array[] | SizedBody, end = false): H2Stream {
    if (!this.usable) throw new Error(this.ended ? 'the connection to etcd closed' : 'the connection to etcd is going away');
    if (this.streams.size >= this.peerMaxStreams) throw new Error(`etcd allows ${this.peerMaxStreams} concurrent streams`);
    const id = this.nextId;
    this.nextId += 2;
    const stream: Stream = { id, handler, sendWindow: this.peerInitialWindow, pendingEnd: false, localEnded: false, unacked: 0 };
    this.streams.set(id, stream);
    const flags = FLAG_END_HEADERS | (body === undefined && end ? FLAG_END_STREAM : 0);
    const sized = body !== undefined && isSizedBody(body) ? body : undefined;
    const parts = body === undefined || sized ? [] : body instanceof Uint8Array ? [body] : (body as readonly Uint8Array[]);
    let length = sized ? sized.size : 0;
    for (const part of parts) length += part.length;
    if (body === undefined || length > stream.sendWindow || length > this.sendWindow || length > this.peerMaxFrame) {
      const headers = this.frame(FRAME_HEADERS, flags, id, headerBlock.length);
      headerBlock.copy(headers, 9);
      this.write(headers);
      if (body === undefined) stream.localEnded = end;
      else if (sized) this.queue(stream, writtenAlone(sized), end);
      else this.queue(stream, parts.length === 1 ? parts[0]! : Buffer.concat(parts), end);
    } else {
      // The common case, one buffer: HEADERS and the whole body in one DATA frame.
      const out = Buffer.allocUnsafe(9 + headerBlock.length + 9 + length);
      this.header(out, 0, headerBlock.length, FRAME_HEADERS, flags, id);
      headerBlock.copy(out, 9);
      let at = 9 + headerBlock.length;
      this.header(out, at, length, FRAME_DATA, end ? FLAG_END_STREAM : 0, id);
      at += 9;
      if (sized) sized.writeTo(out, at);
      for (const part of parts) {
        out.set(part, at);
        at += part.length;
      }
      stream.sendWindow -= length;
      this.sendWindow -= length;
      stream.localEnded = end;
      this.write(out);
    }
    return new H2Stream(this, stream);
  }

  /** Sends a PING; `done` is called at its ACK, or with an error when the connection ends first. */
  ping(done: (err?: Error) => void): void {
    if (this.ended) return done(new Error('the connection to etcd closed'));
    this.pings.push(done);
    this.write(this.frame(FRAME_PING, 0, 0, 8).fill(0, 9));
  }

  /** No new streams; the connection ends once the open ones have (GOAWAY sent to say so). */
  close(): void {
    if (this.closing || this.ended) return;
    this.closing = true;
    this.write(this.goaway(H2Error.NO_ERROR));
    this.streamGone();
  }

  /**
   * Ends the connection now: its streams are aborted with `err`'s message. A `last` frame
   * (GOAWAY naming the error) is flushed before the socket goes.
   */
  destroy(err?: Error, last?: Buffer): void {
    if (this.ended) return;
    this.ended = true;
    const reason = err?.message ?? 'the connection to etcd was closed';
    const streams = [...this.streams.values()];
    this.streams.clear();
    this.blocked.clear();
    for (const stream of streams) stream.handler.onAbort(reason, H2Error.CANCEL);
    for (const done of this.pings.splice(0)) done(new Error(reason));
    // Nothing more is read: what was gathered of a frame or a header block goes now.
    this.carry = undefined;
    this.continuing = undefined;
    const out = this.takeOutput();
    const socket = this.socket;
    if (last && !socket.destroyed) {
      socket.end(out ? Buffer.concat([out, last]) : last);
      // The grace for the last frame to leave holds the socket only, and only until it closes.
      const grace = setTimeout(() => socket.destroy(), 1000).unref();
      socket.once('close', () => clearTimeout(grace));
    } else {
      socket.destroy();
    }
    this.events.onClose?.(err);
  }

  /** Queues a new stream's body and sends what the windows allow. */
  private queue(stream: Stream, data: Uint8Array, end: boolean): void {
    stream.pending = Buffer.from(data.buffer, data.byteOffset, data.length);
    stream.pendingEnd = end;
    this.flush(stream);
  }

  /** @internal Resets `stream` with `code`, reporting nothing to its handler. */
  reset(stream: Stream, code: number): void {
    if (!this.forget(stream)) return;
    if (!this.ended) this.write(this.rstStream(stream.id, code));
    this.streamGone();
  }

  /** Sends as much of `stream`'s pending bytes as the windows allow; true when all went. */
  private flush(stream: Stream): boolean {
    let pending = stream.pending;
    while (pending !== undefined) {
      const size = Math.min(pending.length, stream.sendWindow, this.sendWindow, this.peerMaxFrame);
      if (size <= 0 && pending.length > 0) {
        this.blocked.add(stream);
        stream.pending = pending;
        return false;
      }
      const last = size === pending.length;
      const frame = this.frame(FRAME_DATA, last && stream.pendingEnd ? FLAG_END_STREAM : 0, stream.id, size);
      pending.copy(frame, 9, 0, size);
      this.write(frame);
      stream.sendWindow -= size;
      this.sendWindow -= size;
      pending = last ? undefined : pending.subarray(size);
    }
    stream.pending = undefined;
    if (stream.pendingEnd) stream.localEnded = true;
    this.blocked.delete(stream);
    return true;
  }

  private flushBlocked(): void {
    for (const stream of this.blocked) {
      if (!this.flush(stream) && this.sendWindow <= 0) return;
    }
  }

  /**
   * Reads the frames in `chunk`. A frame cut off by the end of a read is gathered in a buffer of
   * its own size (`carry`) from the reads that follow; the rest of those reads is parsed in
   * place. (Joining the cut-off bytes with the whole next read copied most of a large response
   * twice.)
   */
  private read(chunk: Buffer): void {
    try {
      let at = this.carry ? this.fillCarry(chunk) : 0;
      while (!this.ended && chunk.length - at >= 9) {
        const length = frameLength(chunk, at);
        if (chunk.length - at < 9 + length) break;
        this.frameAt(chunk, at, length);
        at += 9 + length;
      }
      if (!this.ended && at < chunk.length) this.startCarry(chunk.subarray(at));
    } catch (err) {
      const code = err instanceof ConnectionError ? err.code : err instanceof HpackError ? H2Error.COMPRESSION_ERROR : H2Error.INTERNAL_ERROR;
      this.destroy(new Error(`HTTP/2 error from etcd's side (${code}): ${(err as Error).message}`), this.goaway(code));
    }
  }

  /** Starts gathering a cut-off frame from `bytes` (its first bytes, fewer than the whole frame). */
  private startCarry(bytes: Buffer): void {
    const carry = Buffer.allocUnsafe(bytes.length >= 9 ? 9 + frameLength(bytes, 0) : 9);
    bytes.copy(carry, 0);
    this.carry = carry;
    this.carried = bytes.length;
  }

  /** Adds the start of `chunk` to the cut-off frame, handling it once whole; the bytes used. */
  private fillCarry(chunk: Buffer): number {
    let carry = this.carry!;
    let used = 0;
    if (this.carried < 9) {
      used = Math.min(9 - this.carried, chunk.length);
      chunk.copy(carry, this.carried, 0, used);
      this.carried += used;
      if (this.carried < 9) return used;
      const whole = Buffer.allocUnsafe(9 + frameLength(carry, 0));
      carry.copy(whole, 0, 0, 9);
      this.carry = carry = whole;
    }
    const take = Math.min(carry.length - this.carried, chunk.length - used);
    chunk.copy(carry, this.carried, used, used + take);
    this.carried += take;
    used += take;
    if (this.carried === carry.length) {
      this.carry = undefined;
      this.frameAt(carry, 0, carry.length - 9);
    }
    return used;
  }

  /** Handles the whole frame at `at` in `bytes`, its payload `length` bytes long. */
  private frameAt(bytes: Buffer, at: number, length: number): void {
    const streamId = bytes.readUInt32BE(at + 5) & MAX_STREAM_ID;
    this.frameIn(bytes[at + 3]!, bytes[at + 4]!, streamId, bytes.subarray(at + 9, at + 9 + length));
  }

  private frameIn(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (this.continuing && type !== FRAME_CONTINUATION) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'a header block interrupted');
    switch (type) {
      case FRAME_DATA:
        return this.dataIn(flags, streamId, payload);
      case FRAME_HEADERS: {
        if (streamId === 0) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'HEADERS on stream 0');
        let block = unpad(flags, payload);
        if (flags & FLAG_PRIORITY) block = block.subarray(5);
        const endStream = (flags & FLAG_END_STREAM) !== 0;
        if (flags & FLAG_END_HEADERS) return this.headersIn(streamId, block, endStream);
        this.continuing = { streamId, endStream, fragments: [block], size: block.length };
        return;
      }
      case FRAME_CONTINUATION: {
        const open = this.continuing;
        if (!open || open.streamId !== streamId) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'an unexpected CONTINUATION');
        open.size += payload.length;
        if (open.size > MAX_HEADER_BLOCK) throw new ConnectionError(H2Error.ENHANCE_YOUR_CALM, `a header block over ${MAX_HEADER_BLOCK} bytes`);
        open.fragments.push(payload);
        if (flags & FLAG_END_HEADERS) {
          this.continuing = undefined;
          this.headersIn(streamId, Buffer.concat(open.fragments), open.endStream);
        }
        return;
      }
      case FRAME_RST_STREAM: {
        if (payload.length !== 4) throw new ConnectionError(H2Error.FRAME_SIZE_ERROR, 'RST_STREAM of the wrong size');
        const stream = this.streams.get(streamId);
        if (!stream) return;
        const code = payload.readUInt32BE(0);
        this.forget(stream);
        stream.handler.onAbort(`etcd reset the stream (HTTP/2 error ${code})`, code);
        this.streamGone();
        return;
      }
      case FRAME_SETTINGS:
        if (streamId !== 0) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'SETTINGS on a stream');
        if (flags & FLAG_ACK) return;
        return this.settingsIn(payload);
      case FRAME_PUSH_PROMISE:
        throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'PUSH_PROMISE, which this side disabled');
      case FRAME_PING:
        if (payload.length !== 8) throw new ConnectionError(H2Error.FRAME_SIZE_ERROR, 'PING of the wrong size');
        if (flags & FLAG_ACK) {
          this.pings.shift()?.();
          return;
        }
        {
          const ack = this.frame(FRAME_PING, FLAG_ACK, 0, 8);
          payload.copy(ack, 9);
          this.write(ack);
        }
        return;
      case FRAME_GOAWAY:
        return this.goawayIn(payload);
      case FRAME_WINDOW_UPDATE:
        return this.windowUpdateIn(streamId, payload);
      default:
        // PRIORITY (0x2) is advice; unknown frame types are ignored (section 4.1).
        return;
    }
  }

  private dataIn(flags: number, streamId: number, payload: Buffer): void {
    if (streamId === 0) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'DATA on stream 0');
    // Checked before the stream can be finished: a frame that fails here fails the connection,
    // which must still find the stream to abort (a watch has no deadline to end it otherwise).
    const data = unpad(flags, payload);
    // The whole payload counts against the windows, padding included.
    this.receivedUnacked += payload.length;
    if (this.receivedUnacked >= this.windows.connection / 2) {
      this.write(this.windowUpdate(0, this.receivedUnacked));
      this.receivedUnacked = 0;
    }
    const stream = this.streams.get(streamId);
    if (!stream) return;
    const endStream = (flags & FLAG_END_STREAM) !== 0;
    stream.unacked += payload.length;
    if (!endStream && stream.unacked >= this.windows.stream / 2) {
      this.write(this.windowUpdate(streamId, stream.unacked));
      stream.unacked = 0;
    }
    if (endStream) this.remoteEnded(stream);
    stream.handler.onData(data, endStream);
  }

  private headersIn(streamId: number, block: Buffer, endStream: boolean): void {
    // Every block is decoded, the stream's or not: the table is the connection's.
    const fields = this.decoder.decode(block);
    const stream = this.streams.get(streamId);
    if (!stream) return;
    if (endStream) this.remoteEnded(stream);
    stream.handler.onHeaders(fields, endStream);
  }

  /** The peer finished `stream`: it is done, and a request still being sent is cut short. */
  private remoteEnded(stream: Stream): void {
    this.forget(stream);
    if (!stream.localEnded) this.write(this.rstStream(stream.id, H2Error.NO_ERROR));
    this.streamGone();
  }

  /** Drops `stream` from the connection's books; false if it was gone already. */
  private forget(stream: Stream): boolean {
    this.blocked.delete(stream);
    return this.streams.delete(stream.id);
  }

  private streamGone(): void {
    if (this.streams.size > 0) return;
    // Closing, or told to go away: the last stream done, the connection is (writes flushed first).
    if (this.closing || this.goawayAt !== Infinity) this.destroy(undefined, EMPTY);
  }

  private settingsIn(payload: Buffer): void {
    if (payload.length % 6 !== 0) throw new ConnectionError(H2Error.FRAME_SIZE_ERROR, 'SETTINGS of the wrong size');
    for (let at = 0; at < payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        if (value > MAX_WINDOW) throw new ConnectionError(H2Error.FLOW_CONTROL_ERROR, `an initial window of ${value}`);
        const delta = value - this.peerInitialWindow;
        this.peerInitialWindow = value;
        for (const stream of this.streams.values()) stream.sendWindow += delta;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        if (value < 16_384 || value > 16_777_215) throw new ConnectionError(H2Error.PROTOCOL_ERROR, `a max frame size of ${value}`);
        this.peerMaxFrame = value;
      } else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) {
        this.peerMaxStreams = value;
      }
      // HEADER_TABLE_SIZE bounds the peer's decoder table, which this side's encoder never uses.
    }
    this.write(this.frame(FRAME_SETTINGS, FLAG_ACK, 0, 0));
    this.flushBlocked();
  }

  private goawayIn(payload: Buffer): void {
    if (payload.length < 8) throw new ConnectionError(H2Error.FRAME_SIZE_ERROR, 'GOAWAY too short');
    const last = payload.readUInt32BE(0) & MAX_STREAM_ID;
    const code = payload.readUInt32BE(4);
    this.goawayAt = Math.min(this.goawayAt, last);
    // Streams above `last` were never processed: they fail, and may be sent again elsewhere.
    for (const [id, stream] of this.streams) {
      if (id <= last) continue;
      this.forget(stream);
      stream.handler.onAbort(`etcd is going away (HTTP/2 error ${code}) and refused the stream`, H2Error.REFUSED_STREAM);
    }
    this.events.onGoaway?.(code);
    this.streamGone();
  }

  private windowUpdateIn(streamId: number, payload: Buffer): void {
    if (payload.length !== 4) throw new ConnectionError(H2Error.FRAME_SIZE_ERROR, 'WINDOW_UPDATE of the wrong size');
    const increment = payload.readUInt32BE(0) & MAX_WINDOW;
    if (streamId === 0) {
      if (increment === 0) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'a window update of 0');
      this.sendWindow += increment;
      if (this.sendWindow > MAX_WINDOW) throw new ConnectionError(H2Error.FLOW_CONTROL_ERROR, 'the connection window overflowed');
      this.flushBlocked();
      return;
    }
    const stream = this.streams.get(streamId);
    if (!stream) return;
    if (increment === 0 || stream.sendWindow + increment > MAX_WINDOW) {
      this.reset(stream, increment === 0 ? H2Error.PROTOCOL_ERROR : H2Error.FLOW_CONTROL_ERROR);
      stream.handler.onAbort('etcd sent a bad window update', H2Error.PROTOCOL_ERROR);
      return;
    }
    stream.sendWindow += increment;
    if (stream.pending) this.flush(stream);
  }

  /**
   * Queues `bytes` for the socket; what a turn of the event loop queued goes out in one write
   * when the turn's I/O callbacks are done. Each write to a loopback socket cost ~30 µs of
   * kernel time on the sending side (it runs the receiver's side too), and 64 creates in flight
   * send their calls in the same few turns.
   */
  private write(bytes: Buffer): void {
    if (this.output.length === 0) setImmediate(this.flushOutput);
    this.output.push(bytes);
    this.outputBytes += bytes.length;
  }

  /** Sends what is queued now, instead of when the turn ends. */
  flushNow(): void {
    this.flushOutput();
  }

  private readonly flushOutput = (): void => {
    const out = this.takeOutput();
    if (out && !this.ended) this.socket.write(out);
  };

  private takeOutput(): Buffer | undefined {
    const output = this.output;
    if (output.length === 0) return undefined;
    const out = output.length === 1 ? output[0]! : Buffer.concat(output, this.outputBytes);
    this.output = [];
    this.outputBytes = 0;
    return out;
  }

  private frame(type: number, flags: number, streamId: number, length: number): Buffer {
    const out = Buffer.allocUnsafe(9 + length);
    this.header(out, 0, length, type, flags, streamId);
    return out;
  }

  private header(out: Buffer, at: number, length: number, type: number, flags: number, streamId: number): void {
    out[at] = length >>> 16;
    out[at + 1] = (length >>> 8) & 0xff;
    out[at + 2] = length & 0xff;
    out[at + 3] = type;
    out[at + 4] = flags;
    out.writeUInt32BE(streamId, at + 5);
  }

  private windowUpdate(streamId: number, increment: number): Buffer {
    const out = this.frame(FRAME_WINDOW_UPDATE, 0, streamId, 4);
    out.writeUInt32BE(increment, 9);
    return out;
  }

  private rstStream(streamId: number, code: number): Buffer {
    const out = this.frame(FRAME_RST_STREAM, 0, streamId, 4);
    out.writeUInt32BE(code, 9);
    return out;
  }

  private goaway(code: number): Buffer {
    const out = this.frame(FRAME_GOAWAY, 0, 0, 8);
    out.writeUInt32BE(0, 9); // this side accepts no streams of the peer's
    out.writeUInt32BE(code, 13);
    return out;
  }
}

/**
 * A request body that writes itself where it goes (into the buffer of its frames), so that a
 * message encoded on the spot is not first built in a buffer of its own.
 */
export interface SizedBody {
  readonly size: number;
  /** Writes the `size` bytes at `at`; may be called more than once (a call sent again elsewhere). */
  writeTo(out: Buffer, at: number): void;
}

function isSizedBody(body: Uint8Array | readonly Uint8Array[] | SizedBody): body is SizedBody {
  return typeof (body as SizedBody).writeTo === 'function';
}

/** A sized body's bytes in a buffer of their own (a body that waits for flow control). */
function writtenAlone(body: SizedBody): Buffer {
  const out = Buffer.allocUnsafe(body.size);
  body.writeTo(out, 0);
  return out;
}

class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * A socket's error as an operator reads it: a TLS alert by OpenSSL's reason and Node's code
 * ("sslv3 alert bad certificate" when etcd refused the client certificate), not OpenSSL's
 * message with its source file and line.
 */
function socketError(err: Error & { reason?: unknown; code?: unknown }): Error {
  if (typeof err.reason === 'string' && typeof err.code === 'string' && err.code.startsWith('ERR_SSL_'))
    return new Error(`TLS with etcd failed: ${err.reason} (${err.code})`);
  return err;
}

/** The payload length in the frame header at `at`, refused above what this side accepts. */
function frameLength(bytes: Buffer, at: number): number {
  const length = (bytes[at]! << 16) | (bytes[at + 1]! << 8) | bytes[at + 2]!;
  if (length > MAX_FRAME_IN) throw new ConnectionError(H2Error.FRAME_SIZE_ERROR, `a frame of ${length} bytes`);
  return length;
}

/** A DATA or HEADERS payload without its padding. */
function unpad(flags: number, payload: Buffer): Buffer {
  if ((flags & FLAG_PADDED) === 0) return payload;
  if (payload.length < 1) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'a padded frame without its pad length');
  const pad = payload[0]!;
  if (pad >= payload.length) throw new ConnectionError(H2Error.PROTOCOL_ERROR, 'padding longer than its frame');
  return payload.subarray(1, payload.length - pad);
}
