import { createNaming } from '../../../src/naming';
import { parseListOptions } from '../../../src/gateway/options';

const naming = createNaming('kubernetes');
const parse = (q: string) => parseListOptions(new URLSearchParams(q), naming);

describe('LIST parameters', () => {
  it('decodes every parameter into ListOptions', () => {
    expect(
      parse(
        'resourceVersion=5&resourceVersionMatch=NotOlderThan&limit=10&labelSelector=app%3Dweb&fieldSelector=metadata.name%3Dx&timeoutSeconds=30&allowWatchBookmarks=true',
      ),
    ).toEqual({
      watch: false,
      options: {
        resourceVersion: '5',
        resourceVersionMatch: 'NotOlderThan',
        limit: 10,
        labelSelector: 'app=web',
        fieldSelector: 'metadata.name=x',
        timeoutSeconds: 30,
        allowWatchBookmarks: true,
      },
    });
    expect(parse('continue=abc&limit=2')).toEqual({ watch: false, options: { continue: 'abc', limit: 2 } });
  });

  it('reads booleans as upstream: anything but absent, 0 or false is true', () => {
    expect(parse('watch=true').watch).toBe(true);
    expect(parse('watch=1').watch).toBe(true);
    expect(parse('watch').watch).toBe(true);
    expect(parse('watch=FALSE').watch).toBe(false);
    expect(parse('watch=0').watch).toBe(false);
    expect(parse('watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan').options.sendInitialEvents).toBe(true);
  });

  it('drops a zero limit (no limit)', () => {
    expect(parse('limit=0').options.limit).toBeUndefined();
  });

  it('answers 400 with strconv messages for malformed integers', () => {
    expect(() => parse('limit=abc')).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({ code: 400, reason: 'BadRequest', message: 'strconv.ParseInt: parsing "abc": invalid syntax' }),
      }),
    );
    expect(() => parse('timeoutSeconds=1.5')).toThrow(expect.objectContaining({ message: 'strconv.ParseInt: parsing "1.5": invalid syntax' }));
    expect(() => parse('limit=99999999999999999999')).toThrow(
      expect.objectContaining({ message: 'strconv.ParseInt: parsing "99999999999999999999": value out of range' }),
    );
    expect(() => parse('limit=')).toThrow(expect.objectContaining({ code: 400 }));
  });

  it('accepts a negative timeoutSeconds as upstream does (the watch simply ends at once)', () => {
    expect(parse('timeoutSeconds=-1').options.timeoutSeconds).toBe(-1);
  });

  it('answers 400 with upstream ListOptions wording for forbidden combinations (where upstream answers 422)', () => {
    expect(() => parse('resourceVersionMatch=Exact')).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({
          code: 400,
          reason: 'BadRequest',
          message:
            'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
          details: {
            causes: [
              {
                reason: 'FieldValueForbidden',
                message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
                field: 'resourceVersionMatch',
              },
            ],
          },
        }),
      }),
    );
    expect(() => parse('resourceVersion=1&resourceVersionMatch=Newest')).toThrow(
      expect.objectContaining({
        message: 'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""',
      }),
    );
    expect(() => parse('resourceVersion=0&resourceVersionMatch=Exact')).toThrow(expect.objectContaining({ code: 400 }));
    expect(() => parse('sendInitialEvents=true')).toThrow(
      expect.objectContaining({ message: 'ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list' }),
    );
    expect(() => parse('watch=1&sendInitialEvents=true')).toThrow(
      expect.objectContaining({
        message:
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      }),
    );
    expect(() => parse('watch=1&resourceVersionMatch=NotOlderThan')).toThrow(
      expect.objectContaining({
        message:
          'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      }),
    );
  });

  it('uses the naming profile for the meta group', () => {
    expect(() => parseListOptions(new URLSearchParams('resourceVersionMatch=Exact'), createNaming('platform'))).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^ListOptions\.meta\.platform\.io "" is invalid/) }),
    );
  });
});
