/**
 * The buffer both binary writers (protobuf, CBOR) write into: one allocation that doubles when
 * full, so encoding allocates no per-field objects, and `finish` copies out exactly the bytes
 * written (the scratch buffer is not shared with the caller).
 */
export abstract class GrowableWriter {
  protected buf: Buffer;
  protected pos = 0;

  constructor(initialSize: number) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  /** Make room for `extra` more bytes. */
  protected ensure(extra: number): void {
    const need = this.pos + extra;
    if (need <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}
