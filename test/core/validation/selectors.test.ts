import { FieldPath } from '../../../src/core/validation/field-errors';
import { goLabelSelector, labelSelectorMatches, labelSelectorToString, validateLabelSelector } from '../../../src/core/validation/selectors';

const path = FieldPath.root('spec', 'selector');

describe('validateLabelSelector', () => {
  it('accepts labels and well-formed expressions', () => {
    expect(
      validateLabelSelector(
        {
          matchLabels: { app: 'web' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['a', 'b'] },
            { key: 'env', operator: 'DoesNotExist' },
          ],
        },
        path,
      ),
    ).toEqual([]);
    expect(validateLabelSelector(undefined, path)).toEqual([]);
  });

  it('applies the operator rules', () => {
    const errs = validateLabelSelector(
      {
        matchExpressions: [
          { key: 'a', operator: 'In', values: [] },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Equals', values: ['x'] },
          { key: 'bad key', operator: 'NotIn', values: ['-x'] },
        ],
      },
      path,
    );
    expect(errs.map((e) => e.message)).toEqual([
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Invalid value: "Equals": not a valid selector operator',
      expect.stringMatching(/^spec.selector.matchExpressions\[3\].key: Invalid value: "bad key": name part must consist/),
      expect.stringMatching(/^spec.selector.matchExpressions\[3\].values\[0\]: Invalid value: "-x": a valid label must be/),
    ]);
  });

  it('checks matchLabels like labels', () => {
    expect(validateLabelSelector({ matchLabels: { a: '-' } }, path)[0]!.field).toBe('spec.selector.matchLabels');
  });
});

describe('labelSelectorMatches', () => {
  const labels = { app: 'web', tier: 'front' };
  it('selects nothing without a selector and everything with an empty one', () => {
    expect(labelSelectorMatches(undefined, labels)).toBe(false);
    expect(labelSelectorMatches({}, labels)).toBe(true);
  });
  it('applies every requirement', () => {
    expect(labelSelectorMatches({ matchLabels: { app: 'web' } }, labels)).toBe(true);
    expect(labelSelectorMatches({ matchLabels: { app: 'db' } }, labels)).toBe(false);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }, labels)).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, labels)).toBe(false);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] }, labels)).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, labels)).toBe(true);
    expect(labelSelectorMatches({ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, labels)).toBe(false);
    expect(labelSelectorMatches({ matchLabels: { app: 'web' } }, undefined)).toBe(false);
  });
});

describe('labelSelectorToString', () => {
  it('prints requirements sorted by key with sorted values', () => {
    expect(
      labelSelectorToString({
        matchLabels: { tier: 'front', app: 'web' },
        matchExpressions: [
          { key: 'env', operator: 'NotIn', values: ['prod', 'dev'] },
          { key: 'zone', operator: 'Exists' },
          { key: 'b', operator: 'DoesNotExist' },
          { key: 'c', operator: 'In', values: ['y', 'x'] },
        ],
      }),
    ).toBe('app=web,!b,c in (x,y),env notin (dev,prod),tier=front,zone');
  });
  it('is empty for an empty selector', () => {
    expect(labelSelectorToString({})).toBe('');
  });
});

describe('goLabelSelector', () => {
  it('renders Go %#v', () => {
    expect(goLabelSelector({ matchLabels: { app: 'web' } })).toBe(
      'v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}',
    );
    expect(goLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Exists' }] })).toBe(
      'v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"a", Operator:"Exists", Values:[]string(nil)}}}',
    );
  });
});
