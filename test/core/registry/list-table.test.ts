/**
 * docs/API.md, "Reads and resourceVersion": every cell of the list table, on both backends.
 *
 * Fixture: configmaps c0..c4 in one namespace; `mid` is the revision after c0..c2 existed, and
 * c0 was updated after all five were created. An Exact read at `mid` therefore sees three items
 * and c0's first version; anything "Most recent" or "Not older than mid" sees five and c0's new one.
 */
import type { ApiList, ListOptions } from '../../../src/core';
import { BACKENDS, coreBackend, cm, createConfigMap, createNamespace, ctx, namesOf, rvOf, statusOf, type TestCore } from './core-backends';

describe.each(BACKENDS)('list table on %s', (name) => {
  const backend = coreBackend(name);
  let t: TestCore;
  let mid: number;
  let latestC0: string;
  const ns = 'lt';
  const list = (options: ListOptions): Promise<ApiList> => t.core.list(cm(ns), options, ctx);

  beforeAll(async () => {
    t = await backend.open();
    await createNamespace(t.core, ns);
    for (let i = 0; i < 5; i++) {
      const obj = await createConfigMap(t.core, ns, `c${i}`, { n: String(i % 2) });
      if (i === 2) mid = rvOf(obj);
    }
    const c0 = await t.core.get(cm(ns, 'c0'), {}, ctx);
    latestC0 = (await t.core.update(cm(ns, 'c0'), { ...c0, data: { v: '2' } }, {}, ctx)).object.metadata!.resourceVersion!;
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  const current = async () => t.store.currentRevision();
  const expectLatest = (l: ApiList) => {
    expect(namesOf(l.items)).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
    expect(l.items[0]!.metadata!.resourceVersion).toBe(latestC0);
  };
  const expectAtMid = (l: ApiList, names = ['c0', 'c1', 'c2']) => {
    expect(l.metadata.resourceVersion).toBe(String(mid));
    expect(namesOf(l.items)).toEqual(names);
    expect(l.items[0]!.metadata!.resourceVersion).not.toBe(latestC0);
  };
  const badRequest = (options: ListOptions, message: RegExp) =>
    statusOf(list(options), 400, 'BadRequest').then((e) => expect(e.status.message).toMatch(message));

  describe('resourceVersionMatch unset, limit unset', () => {
    it('unset: Most recent', async () => {
      const l = await list({});
      expectLatest(l);
      expect(rvOf(l)).toBeGreaterThanOrEqual((await current()) - 0);
      expect(l.metadata.continue).toBeUndefined();
      expect(l.metadata.remainingItemCount).toBeUndefined();
    });
    it('0: Any', async () => {
      const l = await list({ resourceVersion: '0' });
      expect(namesOf(l.items)).toHaveLength(5);
      expect(rvOf(l)).toBeGreaterThanOrEqual(Number(latestC0));
    });
    it('non-zero: Not older than (the current state, not the version asked for)', async () => {
      const l = await list({ resourceVersion: String(mid) });
      expectLatest(l);
      expect(rvOf(l)).toBeGreaterThanOrEqual(mid);
    });
  });

  describe('resourceVersionMatch unset, limit=n, continue unset', () => {
    it('unset: Most recent, chunked, remainingItemCount counts what follows', async () => {
      const l = await list({ limit: 2 });
      expect(namesOf(l.items)).toEqual(['c0', 'c1']);
      expect(l.items[0]!.metadata!.resourceVersion).toBe(latestC0);
      expect(l.metadata.continue).toBeTruthy();
      expect(l.metadata.remainingItemCount).toBe(3);
    });
    it('0: Any, chunked', async () => {
      const l = await list({ resourceVersion: '0', limit: 2 });
      expect(namesOf(l.items)).toEqual(['c0', 'c1']);
      expect(l.metadata.continue).toBeTruthy();
    });
    it('non-zero: Exact', async () => {
      const l = await list({ resourceVersion: String(mid), limit: 2 });
      expectAtMid(l, ['c0', 'c1']);
      expect(l.metadata.remainingItemCount).toBe(1);
      const rest = await list({ limit: 2, continue: l.metadata.continue });
      expectAtMid({ ...rest, items: [...l.items, ...rest.items] });
      expect(rest.metadata.continue).toBeUndefined();
      expect(rest.metadata.remainingItemCount).toBeUndefined();
    });
  });

  describe('resourceVersionMatch unset, limit=n, continue=token', () => {
    it("unset: Continue token, Exact (every chunk at the first chunk's version, later writes unseen)", async () => {
      const first = await list({ limit: 2 });
      await createConfigMap(t.core, ns, 'c5');
      await t.core.delete(cm(ns, 'c3'), {}, ctx);
      const second = await list({ limit: 2, continue: first.metadata.continue });
      const third = await list({ limit: 2, continue: second.metadata.continue });
      expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      expect(third.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
      expect([...namesOf(first.items), ...namesOf(second.items), ...namesOf(third.items)]).toEqual(['c0', 'c1', 'c2', 'c3', 'c4']);
      expect(second.metadata.remainingItemCount).toBe(1);
      expect(third.metadata.continue).toBeUndefined();
      // Restore the fixture for the other cells.
      await t.core.delete(cm(ns, 'c5'), {}, ctx);
      await t.core.create(cm(ns), { metadata: { name: 'c3', labels: { n: '1' } }, data: { v: '1' } }, {}, ctx);
    });
    it('0: invalid, treated as Continue token, Exact', async () => {
      const first = await list({ resourceVersion: String(mid), limit: 2 });
      const rest = await list({ resourceVersion: '0', limit: 2, continue: first.metadata.continue });
      expectAtMid({ ...rest, items: [...first.items, ...rest.items] });
    });
    it('non-zero: invalid, 400', async () => {
      const first = await list({ limit: 2 });
      await badRequest(
        { resourceVersion: String(mid), limit: 2, continue: first.metadata.continue },
        /^specifying resource version is not allowed when using continue$/,
      );
    });
  });

  describe('resourceVersionMatch=Exact', () => {
    it('limit unset: unset and 0 are invalid (400), non-zero is Exact', async () => {
      await badRequest(
        { resourceVersionMatch: 'Exact' },
        /^ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided$/,
      );
      await badRequest({ resourceVersionMatch: 'Exact', resourceVersion: '0' }, /resourceVersionMatch "exact" is forbidden for resourceVersion "0"/);
      expectAtMid(await list({ resourceVersionMatch: 'Exact', resourceVersion: String(mid) }));
    });
    it('limit=n: unset and 0 are invalid (400), non-zero is Exact, chunked', async () => {
      await badRequest({ resourceVersionMatch: 'Exact', limit: 2 }, /resourceVersionMatch is forbidden unless resourceVersion is provided/);
      await badRequest({ resourceVersionMatch: 'Exact', resourceVersion: '0', limit: 2 }, /forbidden for resourceVersion "0"/);
      const l = await list({ resourceVersionMatch: 'Exact', resourceVersion: String(mid), limit: 2 });
      expectAtMid(l, ['c0', 'c1']);
      expect(l.metadata.remainingItemCount).toBe(1);
    });
  });

  describe('resourceVersionMatch=NotOlderThan', () => {
    it('limit unset: unset is invalid (400), 0 is Any, non-zero is Not older than', async () => {
      await badRequest({ resourceVersionMatch: 'NotOlderThan' }, /resourceVersionMatch is forbidden unless resourceVersion is provided/);
      expect(namesOf((await list({ resourceVersionMatch: 'NotOlderThan', resourceVersion: '0' })).items)).toHaveLength(5);
      const l = await list({ resourceVersionMatch: 'NotOlderThan', resourceVersion: String(mid) });
      expectLatest(l);
      expect(rvOf(l)).toBeGreaterThanOrEqual(mid);
    });
    it('limit=n: unset is invalid (400), 0 is Any, non-zero is Not older than, chunked', async () => {
      await badRequest({ resourceVersionMatch: 'NotOlderThan', limit: 2 }, /resourceVersionMatch is forbidden unless resourceVersion is provided/);
      const any = await list({ resourceVersionMatch: 'NotOlderThan', resourceVersion: '0', limit: 2 });
      expect(namesOf(any.items)).toEqual(['c0', 'c1']);
      const l = await list({ resourceVersionMatch: 'NotOlderThan', resourceVersion: String(mid), limit: 2 });
      expect(namesOf(l.items)).toEqual(['c0', 'c1']);
      expect(l.items[0]!.metadata!.resourceVersion).toBe(latestC0);
      expect(rvOf(l)).toBeGreaterThan(mid);
      expect(l.metadata.remainingItemCount).toBe(3);
      const rest = await list({ limit: 10, continue: l.metadata.continue });
      expect(namesOf(rest.items)).toEqual(['c2', 'c3', 'c4']);
      expect(rest.metadata.resourceVersion).toBe(l.metadata.resourceVersion);
    });
  });

  it("rejects other invalid combinations with 400 and upstream's wording", async () => {
    await badRequest(
      { resourceVersionMatch: 'Newest' as 'Exact', resourceVersion: '1' },
      /resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""/,
    );
    const first = await list({ limit: 1 });
    await badRequest(
      { resourceVersionMatch: 'NotOlderThan', resourceVersion: '1', continue: first.metadata.continue },
      /resourceVersionMatch is forbidden when continue is provided/,
    );
    await badRequest({ sendInitialEvents: true }, /sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list/);
    await badRequest(
      { resourceVersion: 'abc' },
      /^invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax$/,
    );
    await badRequest({ limit: 1, continue: 'not-a-token' }, /^invalid continue token: continue key is not valid/);
  });

  it('omits remainingItemCount with selectors, on the last chunk and when not chunked', async () => {
    const filtered = await list({ limit: 1, labelSelector: 'n=0' });
    expect(namesOf(filtered.items)).toEqual(['c0']);
    expect(filtered.metadata.continue).toBeTruthy();
    expect(filtered.metadata.remainingItemCount).toBeUndefined();
    const rest = await list({ limit: 5, labelSelector: 'n=0', continue: filtered.metadata.continue });
    expect(namesOf(rest.items)).toEqual(['c2', 'c4']);
    expect(rest.metadata.continue).toBeUndefined();
    const exactLast = await list({ limit: 5 });
    expect(exactLast.metadata.continue).toBeUndefined();
    expect(exactLast.metadata.remainingItemCount).toBeUndefined();
    const byField = await list({ limit: 1, fieldSelector: 'metadata.name!=c0' });
    expect(namesOf(byField.items)).toEqual(['c1']);
    expect(byField.metadata.remainingItemCount).toBeUndefined();
  });

  it('lists across namespaces and within one, in key order', async () => {
    await createNamespace(t.core, 'lt-other');
    await createConfigMap(t.core, 'lt-other', 'a');
    const all = await t.core.list(cm(undefined), { labelSelector: 'n' }, ctx);
    expect(all.items.map((i) => `${i.metadata!.namespace}/${i.metadata!.name}`)).toEqual(['lt/c0', 'lt/c1', 'lt/c2', 'lt/c3', 'lt/c4']);
    const chunked = await t.core.list(cm(undefined), { limit: 3 }, ctx);
    const names: string[] = chunked.items.map((i) => `${i.metadata!.namespace}/${i.metadata!.name}`);
    let token = chunked.metadata.continue;
    while (token) {
      const next = await t.core.list(cm(undefined), { limit: 3, continue: token }, ctx);
      names.push(...next.items.map((i) => `${i.metadata!.namespace}/${i.metadata!.name}`));
      token = next.metadata.continue;
    }
    expect(names.filter((n) => n.startsWith('lt'))).toEqual([...names.filter((n) => n.startsWith('lt'))].sort());
    expect(names).toContain('lt-other/a');
    expect(names.filter((n) => n.startsWith('lt/'))).toHaveLength(5);
  });
});
