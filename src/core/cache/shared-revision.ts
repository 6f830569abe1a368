/**
 * Consistent reads share the store's "current revision" request, as upstream batches its
 * progress requests: a burst of consistent gets and lists costs one round trip, not one each.
 *
 * Sharing must not weaken the read: a caller may only use a revision read after it arrived
 * (otherwise a write acknowledged just before it arrived could be missed). So a caller that
 * finds a request already in flight does not join it: it waits for the next one, started as soon
 * as the current one ends and shared by everyone who arrived meanwhile. A burst costs at most
 * two round trips of latency and one request per round.
 */
export class SharedRevision {
  private inFlight?: Promise<number>;
  private next?: Promise<number>;
  /** Requests actually sent (for tests and metrics). */
  requests = 0;

  constructor(private readonly read: () => Promise<number>) {}

  get(): Promise<number> {
    if (!this.inFlight) return this.start();
    this.next ??= this.inFlight.then(
      () => this.afterCurrent(),
      () => this.afterCurrent(),
    );
    return this.next;
  }

  private afterCurrent(): Promise<number> {
    this.next = undefined;
    return this.start();
  }

  private start(): Promise<number> {
    this.requests++;
    const request = this.read();
    this.inFlight = request;
    const clear = () => {
      if (this.inFlight === request) this.inFlight = undefined;
    };
    request.then(clear, clear);
    return request;
  }
}
