/**
 * The watches one gateway is serving, each by the function that ends it, so that shutdown can
 * end them all (docs/OPERATIONS.md, "Shutdown"). A Set made for any number of members, rather
 * than a listener per watch on one shared AbortSignal: node warns past ten listeners on one
 * signal (MaxListenersExceededWarning, issue 50), and a listener left behind holds its watch.
 */
export class OpenWatches {
  private readonly closers = new Set<() => void>();
  private closing = false;

  /**
   * Register an open watch by the function that ends it; returns its unregistration, for when
   * the watch ends. A watch registered once shutdown began is ended at once (and not kept).
   */
  add(close: () => void): () => void {
    if (this.closing) {
      close();
      return () => {};
    }
    this.closers.add(close);
    return () => {
      this.closers.delete(close);
    };
  }

  /** End every open watch, and from now on each one that starts. */
  closeAll(): void {
    this.closing = true;
    const closers = [...this.closers];
    this.closers.clear();
    for (const close of closers) close();
  }

  /** How many watches are open. */
  get size(): number {
    return this.closers.size;
  }
}
