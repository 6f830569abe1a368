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

  /**
   * Copy `value` byte per character from `at` while it is ASCII (the short-string fast path of
   * both formats); returns how many characters were copied, stopping at the first other one.
   * The caller has ensured room for `value.length` bytes.
   */
  protected copyAscii(value: string, at: number): number {
    const buf = this.buf;
    let i = 0;
    for (; i < value.length; i++) {
      const c = value.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at + i] = c;
    }
    return i;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }
}
