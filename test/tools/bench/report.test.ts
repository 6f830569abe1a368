/** The bench's budget verdicts: the target as written, or ≥ 0.8× of a floor that misses it too. */
import { type BudgetCheck, renderBudgets, verdict } from '../../../tools/bench/report';

const check = (over: Partial<BudgetCheck>): BudgetCheck => ({ budget: 'consistent GET vs bare https', target: '≥ 0.4×', measured: '', met: false, ...over });

describe('budget verdicts', () => {
  it('judges a row by its target while its floor reaches the target', () => {
    expect(verdict(check({ met: true, floor: { reaches: true, share: 0.9 } }))).toBe('met');
    expect(verdict(check({ met: false, floor: { reaches: true, share: 0.95 } }))).toBe('MISSED');
    expect(verdict(check({ met: false }))).toBe('MISSED');
    expect(verdict(check({ met: undefined }))).toBe('not run');
  });

  it('judges a row whose floor misses the target too at 0.8x of the floor', () => {
    expect(verdict(check({ floor: { reaches: false, share: 0.913 } }))).toBe('met at its floor (0.91× of its floor, which misses the target too)');
    expect(verdict(check({ floor: { reaches: false, share: 0.8 } }))).toMatch(/^met at its floor/);
    expect(verdict(check({ floor: { reaches: false, share: 0.576 } }))).toBe('MISSED (0.58× of its floor, which misses the target too; ≥ 0.8× of it needed)');
    expect(verdict(check({ floor: { reaches: false, share: NaN } }))).toMatch(/^MISSED/);
  });

  it('prints the verdict in the budget table', () => {
    expect(renderBudgets([check({ measured: '0.337×', floor: { reaches: false, share: 0.913 } })]).split('\n')[2]).toBe(
      '| consistent GET vs bare https | ≥ 0.4× | 0.337× | met at its floor (0.91× of its floor, which misses the target too) |',
    );
  });
});
