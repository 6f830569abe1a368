/**
 * The bench's output: one Markdown table (a row per scenario case, with Keelson's figures, the
 * reference measured in the same run, the ratio, CPU per operation and latency), then the
 * budgets (docs/BENCHMARKS.md, "Budgets") checked against the rows, each with its verdict
 * (`verdict`: the budget as written, or the row's floor where the floor itself misses it).
 * Markdown so that a run pastes straight into docs/BENCHMARKS.md.
 */

export interface Row {
  /** Scenario number from the issue (1-6). */
  scenario: number;
  /** What was measured, e.g. `create ReplicaSet, etcd, 64 clients`. */
  name: string;
  keelson: string;
  reference: string;
  /** Keelson ÷ reference (higher is better for Keelson), already formatted. */
  ratio: string;
  /** Server CPU µs per operation: Keelson / reference. */
  cpu: string;
  /** p50 / p99 (Keelson; reference). */
  latency: string;
  note?: string;
}

export interface BudgetCheck {
  budget: string;
  target: string;
  /** Ratios with three decimals, so a value just under a target never prints as the target. */
  measured: string;
  /** Whether Keelson's reading meets the target as written; undefined: not measured in this run. */
  met: boolean | undefined;
  /**
   * The row's floor, where it has one: a bare node:https server doing the same I/O (the same
   * store calls), measured in the same run. `reaches`: whether the floor's own reading meets
   * the target; `share`: Keelson's reading ÷ the floor's, higher being better for Keelson.
   */
  floor?: { reaches: boolean; share: number };
}

/**
 * Where a row's budget is out of its floor's reach on this machine, the row is judged against
 * the floor instead: Keelson must reach this share of it (docs/BENCHMARKS.md, "How a row is
 * judged").
 */
export const FLOOR_SHARE = 0.8;

/** A budget's verdict: the target as written, or, where the row's floor misses it too, ≥ `FLOOR_SHARE` of the floor. */
export function verdict(check: BudgetCheck): string {
  if (check.met === undefined) return 'not run';
  if (check.met) return 'met';
  const floor = check.floor;
  if (!floor || floor.reaches) return 'MISSED';
  const share = `${floor.share.toFixed(2)}× of its floor, which misses the target too`;
  return floor.share >= FLOOR_SHARE ? `met at its floor (${share})` : `MISSED (${share}; ≥ ${FLOOR_SHARE}× of it needed)`;
}

const nf = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function count(n: number): string {
  return Number.isFinite(n) ? nf.format(n) : '-';
}

export function rate(n: number, unit = '/s'): string {
  return Number.isFinite(n) ? `${n >= 100 ? nf.format(n) : n.toPrecision(3)}${unit}` : '-';
}

export function bytes(n: number): string {
  if (!Number.isFinite(n)) return '-';
  if (n < 0) return `−${bytes(-n)}`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(n >= 100 * 1024 * 1024 ? 0 : 1)} MB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${Math.round(n)} B`;
}

export function micros(us: number | undefined): string {
  if (us === undefined || !Number.isFinite(us)) return '-';
  return us >= 100 ? nf.format(us) : us.toPrecision(3);
}

/** A latency in µs shown in ms. */
export function ms(us: number): string {
  if (!Number.isFinite(us)) return '-';
  const v = us / 1000;
  return `${v >= 100 ? nf.format(v) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ms`;
}

export function ratio(value: number, reference: number): string {
  if (!Number.isFinite(value) || !Number.isFinite(reference) || reference === 0) return '-';
  return `${(value / reference).toFixed(2)}×`;
}

function escapeCell(cell: string): string {
  return cell.replace(/\|/g, '\\|');
}

export function renderTable(rows: Row[]): string {
  const header = ['#', 'scenario', 'Keelson', 'reference (same run)', 'ratio', 'server CPU µs/op (Keelson / ref)', 'p50 / p99', 'notes'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i >= 2 && i <= 5 ? '---:' : '---')).join('|')}|`];
  // By scenario, in the order measured within each (sort is stable).
  for (const r of [...rows].sort((a, b) => a.scenario - b.scenario)) {
    lines.push(`| ${[String(r.scenario), r.name, r.keelson, r.reference, r.ratio, r.cpu, r.latency, r.note ?? ''].map(escapeCell).join(' | ')} |`);
  }
  return lines.join('\n');
}

export function renderBudgets(checks: BudgetCheck[]): string {
  const lines = ['| budget (docs/BENCHMARKS.md) | target | measured | verdict |', '|---|---|---|---|'];
  for (const c of checks) lines.push(`| ${[c.budget, c.target, c.measured, verdict(c)].map(escapeCell).join(' | ')} |`);
  return lines.join('\n');
}
