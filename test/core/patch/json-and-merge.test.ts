/**
 * JSON patch (RFC 6902 as evanphx/json-patch v4 applies it) and JSON merge patch (RFC 7386),
 * with the statuses upstream's patch handler answers for bad and failing patches.
 */
import { StatusError } from '../../../src/status';
import { applyJsonPatch, applyMergePatch, decodeJsonPatch } from '../../../src/core/patch';

function statusOf(fn: () => unknown): { code: number; reason: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StatusError);
    const s = (err as StatusError).status;
    return { code: s.code, reason: s.reason ?? '', message: s.message ?? '' };
  }
  throw new Error('expected a StatusError');
}

const doc = { metadata: { name: 'a', labels: { x: '1' } }, spec: { list: [1, 2, 3], nested: { k: 'v' } } };
const json = (ops: unknown) => applyJsonPatch(doc, decodeJsonPatch(ops));

describe('JSON patch', () => {
  it('adds, removes, replaces, moves, copies and tests', () => {
    expect(
      json([
        { op: 'test', path: '/metadata/name', value: 'a' },
        { op: 'add', path: '/metadata/labels/y', value: '2' },
        { op: 'remove', path: '/metadata/labels/x' },
        { op: 'replace', path: '/spec/list/0', value: 9 },
        { op: 'add', path: '/spec/list/-', value: 4 },
        // v4 counts a negative index from the end of the grown list: -1 appends.
        { op: 'add', path: '/spec/list/-1', value: 7 },
        { op: 'copy', from: '/spec/nested', path: '/spec/copied' },
        { op: 'move', from: '/spec/nested/k', path: '/spec/moved' },
      ]),
    ).toEqual({ metadata: { name: 'a', labels: { y: '2' } }, spec: { list: [9, 2, 3, 4, 7], nested: {}, copied: { k: 'v' }, moved: 'v' } });
  });

  it('passes a test of an absent value against null', () => {
    expect(json([{ op: 'test', path: '/metadata/missing', value: null }])).toEqual(doc);
  });

  it('answers the generic 422 for a failing operation, as upstream does', () => {
    const rejected = { code: 422, reason: 'Invalid', message: 'the server rejected our request due to an error in our request' };
    expect(statusOf(() => json([{ op: 'test', path: '/metadata/name', value: 'b' }]))).toEqual(rejected);
    expect(statusOf(() => json([{ op: 'remove', path: '/metadata/nope' }]))).toEqual(rejected);
    expect(statusOf(() => json([{ op: 'replace', path: '/spec/list/9', value: 1 }]))).toEqual(rejected);
    expect(statusOf(() => json([{ op: 'frobnicate', path: '/a' }]))).toEqual(rejected);
    expect(statusOf(() => json([{ op: 'add', value: 1 }]))).toEqual(rejected);
  });

  it('answers 400 for a body that is not a list of operations, and 413 past 10000 operations', () => {
    expect(statusOf(() => decodeJsonPatch({ op: 'add' }))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'json: cannot unmarshal object into Go value of type jsonpatch.Patch',
    });
    expect(statusOf(() => decodeJsonPatch(['x']))).toEqual({
      code: 400,
      reason: 'BadRequest',
      message: 'json: cannot unmarshal string into Go value of type jsonpatch.Operation',
    });
    const many = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/metadata/name', value: 'a' }));
    expect(statusOf(() => decodeJsonPatch(many))).toEqual({
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    });
  });
});

describe('JSON merge patch', () => {
  it('merges objects, deletes with null, replaces lists and drops nulls inside new objects', () => {
    expect(applyMergePatch(doc, { metadata: { labels: { x: null, z: '3' } }, spec: { list: [5], nested: 'flat', added: { a: 1, b: null } } })).toEqual({
      metadata: { name: 'a', labels: { z: '3' } },
      spec: { list: [5], nested: 'flat', added: { a: 1 } },
    });
  });

  it('refuses a null patch (400) and a patch that is not an object (422)', () => {
    expect(statusOf(() => applyMergePatch(doc, null))).toEqual({ code: 400, reason: 'BadRequest', message: 'Invalid JSON Patch' });
    const notObject = statusOf(() => applyMergePatch(doc, [1]));
    expect(notObject.code).toBe(422);
    expect(notObject.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\[1\]": couldn't get version\/kind; json parse error: json: cannot unmarshal array/,
    );
  });
});
