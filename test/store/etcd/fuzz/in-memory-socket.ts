/**
 * A socket with nobody on the other end: what the client writes is counted and dropped, and the
 * test hands it the peer's bytes itself, in chunks it chooses. The fuzzer drives the real etcd
 * client over it (`EtcdClientOptions.dial`), so a case is deterministic: no kernel decides where
 * a read ends, and a seed replays exactly.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { EtcdClient, type EtcdClientOptions, type EtcdTransport } from '../../../../src/store/etcd/client';

export class InMemorySocket extends EventEmitter {
  destroyed = false;
  /** Bytes the client wrote (its preface, requests, acknowledgements). */
  bytesWritten = 0;

  setNoDelay(): this {
    return this;
  }

  write(data: Uint8Array): boolean {
    if (!this.destroyed) this.bytesWritten += data.length;
    return true;
  }

  end(data?: Uint8Array): this {
    if (data) this.write(data);
    this.destroy();
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    // As net.Socket: 'close' comes on a later tick.
    process.nextTick(() => this.emit('close', false));
    return this;
  }

  /** The transport is up (the client starts reading). */
  connect(): void {
    this.emit('connect');
  }

  /** The peer's bytes, as one read. */
  deliver(chunk: Buffer): void {
    if (!this.destroyed) this.emit('data', chunk);
  }

  /** The connection is refused (no member listens there). */
  refuse(): void {
    this.destroyed = true;
    process.nextTick(() => {
      this.emit('error', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
      this.emit('close', true);
    });
  }

  /** The peer closes the connection. */
  hangUp(): void {
    this.destroy();
  }

  asTransport(): EtcdTransport {
    return { socket: this as unknown as Socket, connectEvent: 'connect' };
  }
}

/** An etcd client whose connections are in-memory sockets: `sockets` in the order dialled. */
export function clientOverMemory(options: Partial<EtcdClientOptions> = {}): { client: EtcdClient; sockets: InMemorySocket[] } {
  const sockets: InMemorySocket[] = [];
  const client = new EtcdClient({
    endpoints: ['http://member-a:2379'],
    timeoutMs: 10_000,
    keepaliveMs: 0,
    ...options,
    dial: () => {
      const socket = new InMemorySocket();
      sockets.push(socket);
      return socket.asTransport();
    },
  });
  return { client, sockets };
}
