/**
 * Label selectors: upstream's grammar, matching rules and parse-error messages (a bad selector
 * answers 400 with the same text upstream would).
 */
import { parseLabelSelector, SelectorParseError } from '../../../src/core/selectors';

const errorOf = (text: string): string => {
  try {
    parseLabelSelector(text);
  } catch (err) {
    expect(err).toBeInstanceOf(SelectorParseError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
};

describe('label selector parsing', () => {
  it('accepts equality, set-based, existence and numeric requirements, sorted by key', () => {
    const sel = parseLabelSelector('tier in (web, db),!canary, env=prod,app, v>3, w<10, x==y, z!=q, n notin (a,b)');
    expect(sel.requirements.map((r) => [r.key, r.operator, r.values])).toEqual([
      ['app', 'exists', []],
      ['canary', '!', []],
      ['env', '=', ['prod']],
      ['n', 'notin', ['a', 'b']],
      ['tier', 'in', ['db', 'web']],
      ['v', 'gt', ['3']],
      ['w', 'lt', ['10']],
      ['x', '==', ['y']],
      ['z', '!=', ['q']],
    ]);
    expect(sel.toString()).toBe('app,!canary,env=prod,n notin (a,b),tier in (db,web),v>3,w<10,x==y,z!=q');
  });

  it('treats empty values as upstream does', () => {
    expect(parseLabelSelector('x=').requirements[0]!.values).toEqual(['']);
    expect(parseLabelSelector('x in ()').requirements[0]!.values).toEqual(['']);
    expect(parseLabelSelector('x in (,a)').requirements[0]!.values).toEqual(['', 'a']);
    expect(parseLabelSelector('x in (in, notin)').requirements[0]!.values).toEqual(['in', 'notin']);
    expect(parseLabelSelector('').empty).toBe(true);
    expect(parseLabelSelector('   ').empty).toBe(true);
  });

  it('matches like upstream', () => {
    const m = (sel: string, labels?: Record<string, string>) => parseLabelSelector(sel).matches(labels);
    expect(m('x in (a,b)', { x: 'a' })).toBe(true);
    expect(m('x in (a,b)', { x: 'c' })).toBe(false);
    expect(m('x in (a,b)', {})).toBe(false);
    expect(m('x notin (a)', {})).toBe(true);
    expect(m('x notin (a)', { x: 'a' })).toBe(false);
    expect(m('x!=a', undefined)).toBe(true);
    expect(m('!x', { x: '' })).toBe(false);
    expect(m('x', { x: '' })).toBe(true);
    expect(m('x=', { x: '' })).toBe(true);
    expect(m('x>5', { x: '10' })).toBe(true);
    expect(m('x>5', { x: 'ten' })).toBe(false);
    expect(m('x<5', { x: '-3' })).toBe(true);
    expect(m('a=1,b=2', { a: '1', b: '2' })).toBe(true);
    expect(m('a=1,b=2', { a: '1' })).toBe(false);
  });

  it("rejects bad selectors with upstream's messages", () => {
    expect(errorOf('x in (a')).toBe("unable to parse requirement: found '', expected: ',' or ')'");
    expect(errorOf('x in (')).toBe("unable to parse requirement: found '', expected: ',', ')' or identifier");
    expect(errorOf('x in a')).toBe("unable to parse requirement: found 'a' expected: '('");
    expect(errorOf('x=a,')).toBe("found '', expected: identifier after ','");
    expect(errorOf('x=a y=b')).toBe("found 'y', expected: ',' or 'end of string'");
    expect(errorOf('!x=a')).toBe("found '=', expected: ',' or 'end of string'");
    expect(errorOf('=a')).toBe("found '=', expected: !, identifier, or 'end of string'");
    expect(errorOf('x (a)')).toBe("unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt");
    expect(errorOf('x=(a)')).toBe("unable to parse requirement: found '(', expected: identifier");
    expect(errorOf('x>a')).toBe("unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer");
    expect(errorOf('x_=a')).toMatch(/^unable to parse requirement: <nil>: Invalid value: "x_": name part must consist of alphanumeric characters/);
    expect(errorOf('x=a$')).toMatch(
      /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "a\$": a valid label must be an empty string or consist of alphanumeric characters/,
    );
  });
});
