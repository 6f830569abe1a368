import { AsyncQueue } from '../../src/util/async-queue';

describe('AsyncQueue taken directly', () => {
  it('hands items over within push while attached, after what was buffered, in order', () => {
    const q = new AsyncQueue<number>();
    q.push(1);
    q.push(2);
    const taken: number[] = [];
    expect(
      q.attach(
        (n) => (taken.push(n), true),
        () => {},
      ),
    ).toBe(false);
    for (let n = q.poll(); n !== undefined; n = q.poll()) taken.push(n);
    expect(
      q.attach(
        (n) => (taken.push(n), true),
        () => {},
      ),
    ).toBe(true);
    q.push(3);
    q.push(4);
    expect(taken).toEqual([1, 2, 3, 4]);
    expect(q.size).toBe(0);
  });

  it('buffers again once the consumer stops taking, and a new attach waits for the buffer to drain', () => {
    const q = new AsyncQueue<number>();
    const taken: number[] = [];
    q.attach(
      (n) => (taken.push(n), n < 2),
      () => {},
    );
    q.push(1);
    q.push(2);
    q.push(3);
    q.push(4);
    expect(taken).toEqual([1, 2]);
    expect(q.size).toBe(2);
    expect(
      q.attach(
        () => true,
        () => {},
      ),
    ).toBe(false);
    expect([q.poll(), q.poll(), q.poll()]).toEqual([3, 4, undefined]);
  });

  it('ends a slow consumer by the buffer limit while it is not attached, as the iterator does', () => {
    const q = new AsyncQueue<number>(2);
    q.attach(
      () => false,
      () => {},
    );
    q.push(1);
    q.push(2);
    q.push(3);
    expect(q.push(4)).toBe(false);
    expect(q.isClosed).toBe(true);
  });

  it('tells an attached consumer that the queue ended, with the error it ended with', () => {
    const q = new AsyncQueue<number>();
    let ended = 0;
    q.attach(
      () => true,
      () => ended++,
    );
    q.close(new Error('gone'));
    expect(ended).toBe(1);
    expect(q.poll()).toBeUndefined();
    expect((q.takeFailure() as Error).message).toBe('gone');
    expect(q.takeFailure()).toBeUndefined();
    expect(
      q.attach(
        () => true,
        () => {},
      ),
    ).toBe(false);
  });

  it('closes the queue with what the consumer threw, without failing the producer', () => {
    const q = new AsyncQueue<number>();
    let ended = 0;
    const boom = new Error('cannot write');
    q.attach(
      () => {
        throw boom;
      },
      () => ended++,
    );
    expect(() => q.push(1)).not.toThrow();
    expect(ended).toBe(1);
    expect(q.isClosed).toBe(true);
    expect(q.takeFailure()).toBe(boom);
    expect(q.push(2)).toBe(false);
  });

  it('does not attach while the iterator waits, and the iterator still gets what is pushed', async () => {
    const q = new AsyncQueue<number>();
    const next = q[Symbol.asyncIterator]().next();
    expect(
      q.attach(
        () => true,
        () => {},
      ),
    ).toBe(false);
    q.push(7);
    await expect(next).resolves.toEqual({ value: 7, done: false });
  });
});
