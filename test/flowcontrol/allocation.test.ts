import { computeAllocation, goRound, levelLimits, maxSeatsOf } from '../../src/flowcontrol/allocation';

describe('shares: nominal, lendable and borrowing limits', () => {
  it('gives each level ceil(serverCL * shares / sum) of the server limit (upstream default objects, 600 seats)', () => {
    // The suggested levels' shares plus catch-all and exempt (exempt: 0 shares).
    const shares = {
      'node-high': 40,
      system: 30,
      'leader-election': 10,
      'workload-high': 40,
      'workload-low': 100,
      'global-default': 20,
      'catch-all': 5,
      exempt: 0,
    };
    const sum = Object.values(shares).reduce((a, b) => a + b, 0);
    expect(sum).toBe(245);
    expect(levelLimits(600, sum, { nominalConcurrencyShares: 40 }).nominal).toBe(98);
    expect(levelLimits(600, sum, { nominalConcurrencyShares: 100 }).nominal).toBe(245);
    expect(levelLimits(600, sum, { nominalConcurrencyShares: 5 }).nominal).toBe(13);
    expect(levelLimits(600, sum, { nominalConcurrencyShares: 0 }).nominal).toBe(0);
  });

  it('lends round(nominal * lendablePercent / 100) and borrows round(nominal * borrowingLimitPercent / 100), unlimited without one', () => {
    expect(levelLimits(600, 245, { nominalConcurrencyShares: 100, lendablePercent: 90 })).toEqual({ nominal: 245, lendable: 221, min: 24, max: 845 });
    expect(levelLimits(600, 245, { nominalConcurrencyShares: 30, lendablePercent: 50, borrowingLimitPercent: 50 })).toEqual({
      nominal: 74,
      lendable: 37,
      min: 37,
      max: 111,
    });
  });

  it('rounds halves away from zero as Go does, and caps a level’s widest request at 15% of nominal or nominal/handSize', () => {
    expect(goRound(2.5)).toBe(3);
    expect(goRound(-2.5)).toBe(-3);
    expect(maxSeatsOf(245, 6)).toBe(37);
    expect(maxSeatsOf(13, 6)).toBe(2);
    expect(maxSeatsOf(3, 6)).toBe(1);
  });
});

describe('computeAllocation (upstream’s computeConcurrencyAllocation)', () => {
  it('shares in proportion to the targets when no bound holds', () => {
    const { allocs, fairProp } = computeAllocation(100, [
      { target: 10, lowerBound: 0, upperBound: 100 },
      { target: 30, lowerBound: 0, upperBound: 100 },
    ]);
    expect(fairProp).toBeCloseTo(2.5);
    expect(allocs[0]).toBeCloseTo(25);
    expect(allocs[1]).toBeCloseTo(75);
  });

  it('keeps a class at its lower bound and its upper bound, sharing the rest fairly', () => {
    const { allocs } = computeAllocation(100, [
      { target: 20, lowerBound: 20, upperBound: 100 },
      { target: 50, lowerBound: 0, upperBound: 30 },
      { target: 50, lowerBound: 0, upperBound: 100 },
    ]);
    expect(allocs[0]).toBeCloseTo(20);
    expect(allocs[1]).toBeCloseTo(30);
    expect(allocs[2]).toBeCloseTo(50);
    expect(allocs.reduce((a, b) => a + b, 0)).toBeCloseTo(100);
  });

  it('gives every class its lower bound when those use the whole sum, its upper when those are all there is', () => {
    expect(
      computeAllocation(10, [
        { target: 5, lowerBound: 5, upperBound: 9 },
        { target: 5, lowerBound: 5, upperBound: 9 },
      ]).allocs,
    ).toEqual([5, 5]);
    expect(
      computeAllocation(18, [
        { target: 5, lowerBound: 1, upperBound: 9 },
        { target: 5, lowerBound: 1, upperBound: 9 },
      ]).allocs,
    ).toEqual([9, 9]);
  });

  it('refuses bounds that cannot meet the sum, and a target below its lower bound', () => {
    expect(() =>
      computeAllocation(10, [
        { target: 6, lowerBound: 6, upperBound: 9 },
        { target: 6, lowerBound: 6, upperBound: 9 },
      ]),
    ).toThrow('lower bounds sum to 12, which is higher than the required sum of 10');
    expect(() => computeAllocation(10, [{ target: 1, lowerBound: 1, upperBound: 2 }])).toThrow(
      'upper bounds sum to 2, which is lower than the required sum of 10',
    );
    expect(() => computeAllocation(10, [{ target: 1, lowerBound: 2, upperBound: 20 }])).toThrow('target 0 is 1, which is below its lower bound of 2');
  });
});
