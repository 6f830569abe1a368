/**
 * Consistent reads share the store's "current revision" request, as upstream batches its
 * progress requests: a burst of consistent gets and lists costs one round trip, not one each.
 *
 * Sharing must not weaken the read: a caller may only use a revision read after it arrived
 * (otherwise a write acknowledged just before it arrived could be missed). So a caller never
 * joins a request already sent: callers arriving in the same event-loop turn share the next
 * one, sent at the end of the turn. Up to MAX_IN_FLIGHT requests overlap; past that, the next
 * request waits for one to end, shared by everyone who arrived meanwhile. (Waiting for the one
 * in flight to end before sending the next, as this did first, cost each get up to two round
 * trips: 16 clients of consistent gets went from 11,833–12,125/s to 13,712–15,176/s with the
 * same 0.15 requests per get, `npm run bench -- --quick --only 2`; 2 in flight gave 12,281–12,590/s,
 * 8 gave 13,072–13,415/s.) While large lists stream in write turns the end of the turn is a
 * slice of theirs away, so the request is sent at once (`atTurnEnd`, `util/bulk-writes.ts`).
 */
import { atTurnEnd } from '../../util/bulk-writes';

export const MAX_IN_FLIGHT = 4;

export class SharedRevision {
  private inFlight = 0;
  private next?: { promise: Promise<number>; start: () => void };
  /** Requests actually sent (for tests and metrics). */
  requests = 0;

  constructor(private readonly read: () => Promise<number>) {}

  get(): Promise<number> {
    if (this.next) return this.next.promise;
    let start!: () => void;
    const promise = new Promise<number>((resolve, reject) => {
      start = () => {
        this.next = undefined;
        this.requests++;
        this.inFlight++;
        const done = () => {
          this.inFlight--;
          if (this.next && this.inFlight < MAX_IN_FLIGHT) this.next.start();
        };
        this.read().then(
          (revision) => {
            done();
            resolve(revision);
          },
          (err: unknown) => {
            done();
            reject(err);
          },
        );
      };
    });
    this.next = { promise, start };
    if (this.inFlight < MAX_IN_FLIGHT) {
      atTurnEnd(() => {
        if (this.next?.promise === promise) start();
      });
    }
    return promise;
  }
}
