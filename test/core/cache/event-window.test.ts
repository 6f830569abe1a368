/**
 * The history window: changes kept for a time (5 minutes by default; docs/API.md, "Watch") and
 * up to a count, and the resume point below which a watch gets 410.
 */
import { CacheEvent, CachedObject, deepFreeze } from '../../../src/core/cache';
import { EventWindow } from '../../../src/core/cache/event-window';

const change = (revision: number, at: number, storedBytes = 0) => {
  const obj = new CachedObject(
    `/registry/configmaps/ns/o${revision}`,
    revision,
    deepFreeze({ metadata: { name: `o${revision}`, resourceVersion: String(revision) } }),
    storedBytes,
  );
  return new CacheEvent('ADDED', revision, obj, undefined, at);
};

describe('event window', () => {
  it('serves every change after a resume point it still covers', () => {
    const w = new EventWindow(60_000, 100, 10);
    for (const r of [11, 12, 15]) w.add(change(r, 0));
    expect(w.since(10, 0)!.map((e) => e.revision)).toEqual([11, 12, 15]);
    expect(w.since(12, 0)!.map((e) => e.revision)).toEqual([15]);
    expect(w.since(13, 0)!.map((e) => e.revision)).toEqual([15]);
    expect(w.since(15, 0)).toEqual([]);
    expect(w.since(99, 0)).toEqual([]);
    expect(w.since(9, 0)).toBeUndefined();
    expect(w.oldestResumable).toBe(10);
  });

  it('drops changes older than the window; the resume point moves to the last one dropped', () => {
    const w = new EventWindow(60_000, 100, 10);
    w.add(change(11, 0));
    w.add(change(12, 30_000));
    expect(w.since(10, 60_000)).toBeUndefined();
    expect(w.oldestResumable).toBe(11);
    expect(w.since(11, 60_000)!.map((e) => e.revision)).toEqual([12]);
    expect(w.size).toBe(1);
    expect(w.since(11, 90_000)).toBeUndefined();
    expect(w.since(12, 90_000)).toEqual([]);
  });

  it('keeps at most the configured number of changes', () => {
    const w = new EventWindow(60_000, 3, 0);
    for (let r = 1; r <= 5000; r++) w.add(change(r, 0));
    expect(w.size).toBe(3);
    expect(w.oldestResumable).toBe(4997);
    expect(w.since(4997, 0)!.map((e) => e.revision)).toEqual([4998, 4999, 5000]);
  });

  it('counts the estimated bytes it holds, and trims the oldest changes to a byte bound', () => {
    const w = new EventWindow(60_000, 100, 0);
    for (let r = 1; r <= 10; r++) w.add(change(r, 0, 1000));
    const each = change(1, 0, 1000).bytes;
    expect(each).toBeGreaterThan(2000);
    expect(w.bytes).toBe(10 * each);
    expect(w.trimTo(4 * each)).toBe(6 * each);
    expect([w.size, w.bytes, w.oldestResumable]).toEqual([4, 4 * each, 6]);
    expect(w.since(6, 0)!.map((e) => e.revision)).toEqual([7, 8, 9, 10]);
    expect(w.since(5, 0)).toBeUndefined();
    expect(w.trimTo(0)).toBe(4 * each);
    expect([w.size, w.bytes, w.oldestResumable]).toEqual([0, 0, 10]);
    expect(w.since(10, 0)).toEqual([]);
  });

  it('lets go of what it dropped at once, however few changes it held', () => {
    const w = new EventWindow(60_000, 100, 0);
    for (let r = 1; r <= 10; r++) w.add(change(r, 0, 10));
    w.prune(60_000);
    expect([w.size, w.bytes, w.oldestResumable]).toEqual([0, 0, 10]);
    // No reference to a dropped change is left behind in the window's array.
    expect(JSON.stringify(Object.values(w))).not.toMatch(/o[0-9]+/);
  });
});
