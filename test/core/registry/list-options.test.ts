/**
 * The pure rules behind docs/API.md, "Reads and resourceVersion" and "Watch": which read each combination asks
 * for (the list, get and watch tables), the invalid combinations, and continue tokens.
 */
import type { ListOptions } from '../../../src/core';
import { decodeContinue, encodeContinue } from '../../../src/core/storage/continue-token';
import { listOptionsErrors, planGet, planList, planWatch, validateListOptions } from '../../../src/core/registry/list-options';
import { StatusError } from '../../../src/status';

const V = 'meta.k8s.io/v1';

describe('the list table as a plan', () => {
  const token = encodeContinue(V, 7, 'ns/a\u0000');
  const cells: Array<[string, ListOptions, ReturnType<typeof planList> | 'invalid']> = [
    ['unset, no limit, rv unset', {}, { source: 'cache', freshness: { kind: 'most-recent' } }],
    ['unset, no limit, rv 0', { resourceVersion: '0' }, { source: 'cache', freshness: { kind: 'any' } }],
    ['unset, no limit, rv 5', { resourceVersion: '5' }, { source: 'cache', freshness: { kind: 'not-older-than', revision: 5 } }],
    ['unset, limit, rv unset', { limit: 2 }, { source: 'cache', freshness: { kind: 'most-recent' } }],
    ['unset, limit, rv 0', { limit: 2, resourceVersion: '0' }, { source: 'cache', freshness: { kind: 'any' } }],
    ['unset, limit, rv 5', { limit: 2, resourceVersion: '5' }, { source: 'exact', revision: 5 }],
    ['unset, continue, rv unset', { limit: 2, continue: token }, { source: 'continue', token }],
    ['unset, continue, rv 0', { limit: 2, continue: token, resourceVersion: '0' }, { source: 'continue', token }],
    ['Exact, no limit, rv unset', { resourceVersionMatch: 'Exact' }, 'invalid'],
    ['Exact, no limit, rv 0', { resourceVersionMatch: 'Exact', resourceVersion: '0' }, 'invalid'],
    ['Exact, no limit, rv 5', { resourceVersionMatch: 'Exact', resourceVersion: '5' }, { source: 'exact', revision: 5 }],
    ['Exact, limit, rv unset', { resourceVersionMatch: 'Exact', limit: 2 }, 'invalid'],
    ['Exact, limit, rv 0', { resourceVersionMatch: 'Exact', limit: 2, resourceVersion: '0' }, 'invalid'],
    ['Exact, limit, rv 5', { resourceVersionMatch: 'Exact', limit: 2, resourceVersion: '5' }, { source: 'exact', revision: 5 }],
    ['NotOlderThan, no limit, rv unset', { resourceVersionMatch: 'NotOlderThan' }, 'invalid'],
    ['NotOlderThan, no limit, rv 0', { resourceVersionMatch: 'NotOlderThan', resourceVersion: '0' }, { source: 'cache', freshness: { kind: 'any' } }],
    [
      'NotOlderThan, no limit, rv 5',
      { resourceVersionMatch: 'NotOlderThan', resourceVersion: '5' },
      { source: 'cache', freshness: { kind: 'not-older-than', revision: 5 } },
    ],
    ['NotOlderThan, limit, rv unset', { resourceVersionMatch: 'NotOlderThan', limit: 2 }, 'invalid'],
    ['NotOlderThan, limit, rv 0', { resourceVersionMatch: 'NotOlderThan', limit: 2, resourceVersion: '0' }, { source: 'cache', freshness: { kind: 'any' } }],
    [
      'NotOlderThan, limit, rv 5',
      { resourceVersionMatch: 'NotOlderThan', limit: 2, resourceVersion: '5' },
      { source: 'cache', freshness: { kind: 'not-older-than', revision: 5 } },
    ],
  ];
  it.each(cells)('%s', (_cell, options, expected) => {
    if (expected === 'invalid') {
      expect(listOptionsErrors(options, false).length).toBeGreaterThan(0);
      expect(() => validateListOptions(options, false, 'meta.k8s.io')).toThrow(StatusError);
      return;
    }
    expect(listOptionsErrors(options, false)).toEqual([]);
    expect(planList(options)).toEqual(expected);
  });

  it("reports invalid combinations as 400 with upstream's Invalid message and causes", () => {
    try {
      validateListOptions({ resourceVersionMatch: 'Exact', resourceVersion: '0', continue: 'x' }, false, 'meta.platform.io');
      throw new Error('expected a 400');
    } catch (err) {
      const status = (err as StatusError).status;
      expect(status.code).toBe(400);
      expect(status.reason).toBe('BadRequest');
      expect(status.message).toBe(
        'ListOptions.meta.platform.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"]',
      );
      expect(status.details!.causes).toHaveLength(2);
      expect(status.details!.causes![0]).toEqual({
        reason: 'FieldValueForbidden',
        message: 'Forbidden: resourceVersionMatch is forbidden when continue is provided',
        field: 'resourceVersionMatch',
      });
    }
  });
});

describe('get and watch plans', () => {
  it('get: unset = Most recent, 0 = Any, non-zero = Not older than', () => {
    expect(planGet(undefined)).toEqual({ kind: 'most-recent' });
    expect(planGet('')).toEqual({ kind: 'most-recent' });
    expect(planGet('0')).toEqual({ kind: 'any' });
    expect(planGet('12')).toEqual({ kind: 'not-older-than', revision: 12 });
    expect(() => planGet('-1')).toThrow(/invalid resource version/);
  });

  it('watch: Get State for unset and 0, Start at Exact otherwise; streaming lists end their state with a marked bookmark', () => {
    expect(planWatch({})).toMatchObject({ sendState: true, freshness: { kind: 'most-recent' }, strict: false, markInitialEnd: false });
    expect(planWatch({ resourceVersion: '0' })).toMatchObject({ sendState: true, freshness: { kind: 'any' } });
    expect(planWatch({ resourceVersion: '9' })).toMatchObject({ exactAfter: 9, sendState: false });
    const stream = { sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true } as const;
    expect(planWatch(stream)).toMatchObject({ sendState: true, strict: true, markInitialEnd: true, freshness: { kind: 'most-recent' } });
    expect(planWatch({ ...stream, resourceVersion: '9' })).toMatchObject({ freshness: { kind: 'not-older-than', revision: 9 } });
    expect(planWatch({ ...stream, resourceVersion: '9' }).exactAfter).toBeUndefined();
    expect(planWatch({ ...stream, allowWatchBookmarks: false })).toMatchObject({ markInitialEnd: false });
    expect(planWatch({ sendInitialEvents: false, resourceVersionMatch: 'NotOlderThan' })).toMatchObject({ sendState: false });
    expect(planWatch({ sendInitialEvents: false, resourceVersionMatch: 'NotOlderThan' }).exactAfter).toBeUndefined();
    expect(planWatch({ sendInitialEvents: false, resourceVersionMatch: 'NotOlderThan', resourceVersion: '4' })).toMatchObject({ exactAfter: 4 });
  });

  it("validates watch options with upstream's watch rules", () => {
    const messages = (o: ListOptions) => listOptionsErrors(o, true).map((e) => e.message);
    expect(messages({ sendInitialEvents: true })).toEqual([
      'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    ]);
    expect(messages({ resourceVersionMatch: 'NotOlderThan' })).toEqual([
      'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    ]);
    expect(messages({ sendInitialEvents: true, resourceVersionMatch: 'Exact' })).toEqual([
      'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"',
    ]);
    expect(messages({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan' })).toEqual([]);
  });
});

describe('continue tokens', () => {
  it('round-trip the revision and the start key relative to the prefix', () => {
    expect(decodeContinue(encodeContinue(V, 42, 'default/b\u0000'), V)).toEqual({ revision: 42, start: 'default/b\u0000' });
    expect(decodeContinue(encodeContinue(V, -1, 'b'), V)).toEqual({ revision: -1, start: 'b' });
  });

  it("reject bad tokens with upstream's messages", () => {
    const bad = (token: string) => {
      try {
        decodeContinue(token, V);
      } catch (err) {
        expect((err as StatusError).code).toBe(400);
        return (err as StatusError).status.message;
      }
      throw new Error('expected a 400');
    };
    const raw = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    expect(bad('%%%')).toMatch(/^invalid continue token: continue key is not valid: /);
    expect(bad(raw({ v: 'other/v1', rv: 1, start: 'a' }))).toBe(
      'invalid continue token: continue key is not valid: server does not recognize this encoded key',
    );
    expect(bad(raw({ v: V, rv: 0, start: 'a' }))).toBe(
      `invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version ${V})`,
    );
    expect(bad(raw({ v: V, rv: 3, start: '' }))).toBe('invalid continue token: continue key is not valid: encoded start key empty');
    expect(bad(raw({ v: V, rv: 3, start: '../secrets/x' }))).toBe('invalid continue token: continue key is not valid: ../secrets/x');
    expect(bad(raw({ v: V, rv: 3, start: '/registry/secrets' }))).toMatch(/continue key is not valid/);
  });
});
