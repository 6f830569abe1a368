/**
 * Cost of validation rules, in CEL's cost units, as upstream counts them:
 *
 * - `estimateRule`: the static estimate a definition is refused on (cel-go's checker cost
 *   estimate with Kubernetes' size estimator): identifiers and field selections 1, constants 0,
 *   calls 1 plus their size-dependent part (string comparisons, concatenation, `contains`,
 *   `startsWith`, `endsWith` a tenth of the strings' lengths; `matches` and the regex library the
 *   string's tenth times a quarter of the pattern's length; `in` a list's size), list literals 10,
 *   map literals 30, comprehensions their range and accumulator plus the range's most items times
 *   one iteration's cost. Sizes come from the schema (types.ts): maxLength, maxItems,
 *   maxProperties, else what the request size limit allows. While walking it types `self` from
 *   the schema and reports selections of fields the schema does not have (cel-go's
 *   `undefined field`) and the result's type where it is known.
 * - `instrument`: the rule's syntax tree with a meter on every comprehension's step, for the
 *   runtime budget: each iteration adds its cost when it runs (sizes not weighed: the budget
 *   bounds iterations, which is what can grow without bound).
 */
import { type CelKind, type CelTypeNode, MAX_REQUEST_SIZE_BYTES } from './types';

/** The largest cost (Go's math.MaxUint64). */
export const MAX_COST = 2 ** 64 - 1;

export interface Expr {
  id: bigint;
  exprKind: { case: string | undefined; value?: unknown };
  $typeName?: string;
}

interface Call {
  function: string;
  target?: Expr;
  args: Expr[];
}

interface Comprehension {
  iterVar: string;
  iterVar2?: string;
  iterRange: Expr;
  accuVar: string;
  accuInit: Expr;
  loopCondition: Expr;
  loopStep: Expr;
  result: Expr;
}

/** What the walk knows of a value: its type (when known) and its largest size. */
interface Estimate {
  cost: number;
  /** Strings: length; lists and maps: entries. */
  size: number;
  type: CelTypeNode | undefined;
  kind: CelKind | undefined;
}

export interface TypeProblem {
  /** The expression's id (its position is the parser's). */
  id: bigint;
  message: string;
}

export interface RuleEstimate {
  /** The most one evaluation can cost. */
  cost: number;
  /** The result's type when the walk knows it. */
  kind: CelKind | undefined;
  problems: TypeProblem[];
}

const add = (...xs: number[]): number =>
  Math.min(
    MAX_COST,
    xs.reduce((a, b) => a + b, 0),
  );
const mul = (a: number, b: number): number => (a === 0 || b === 0 ? 0 : Math.min(MAX_COST, a * b));
const tenth = (n: number): number => Math.ceil(n * 0.1);

const UNBOUNDED = MAX_REQUEST_SIZE_BYTES - 2;
const LIST_CREATE = 10;
const MAP_CREATE = 30;
const STRUCT_CREATE = 40;

function typed(type: CelTypeNode | undefined, cost: number): Estimate {
  return { cost, size: type ? type.maxElements : UNBOUNDED, type, kind: type?.kind };
}
const value = (kind: CelKind | undefined, cost: number, size = 1): Estimate => ({ cost, size, type: undefined, kind });

const STRING_LINEAR = new Set([
  'lowerAscii',
  'upperAscii',
  'trim',
  'replace',
  'split',
  'join',
  'substring',
  'charAt',
  'indexOf',
  'lastIndexOf',
  'reverse',
  'quote',
  'format',
  'quantity',
  'isQuantity',
  'url',
  'isURL',
  'ip',
  'isIP',
  'cidr',
  'isCIDR',
  'string',
  'bytes',
  'timestamp',
  'duration',
  'base64.encode',
  'base64.decode',
]);
const REGEX = new Set(['matches', 'find', 'findAll']);
const LIST_LINEAR = new Set(['sum', 'min', 'max', 'isSorted']);
const COMPARISONS = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_']);
const BOOL_RESULTS = new Set([
  ...COMPARISONS,
  '_&&_',
  '_||_',
  '!_',
  '@in',
  '@not_strictly_false',
  'matches',
  'contains',
  'startsWith',
  'endsWith',
  'isSorted',
  'isQuantity',
  'isURL',
  'isIP',
  'isCIDR',
  'isLessThan',
  'isGreaterThan',
  'containsIP',
  'containsCIDR',
]);

class Walker {
  readonly problems: TypeProblem[] = [];
  constructor(
    private readonly self: CelTypeNode,
    private readonly oldSelfOptional: boolean,
  ) {}

  walk(expr: Expr, scope: ReadonlyMap<string, Estimate>): Estimate {
    const v = expr.exprKind.value as Record<string, unknown> | undefined;
    switch (expr.exprKind.case) {
      case 'constExpr':
        return this.constant(v as { constantKind: { case?: string; value?: unknown } });
      case 'identExpr': {
        const name = (v as { name: string }).name;
        const bound = scope.get(name);
        if (bound) return { ...bound, cost: 1 };
        if (name === 'self') return typed(this.self, 1);
        if (name === 'oldSelf') return this.oldSelfOptional ? value(undefined, 1, this.self.maxElements) : typed(this.self, 1);
        return value(undefined, 1, UNBOUNDED);
      }
      case 'selectExpr': {
        const sel = v as { operand: Expr; field: string; testOnly: boolean };
        const operand = this.walk(sel.operand, scope);
        const t = operand.type;
        let field: CelTypeNode | undefined;
        if (t?.kind === 'object') {
          field = t.fields?.get(sel.field);
          if (!field) this.problems.push({ id: expr.id, message: `undefined field '${sel.field}'` });
        } else if (t?.kind === 'map') field = t.elem;
        if (sel.testOnly) return value('bool', add(operand.cost, 1));
        return field ? typed(field, add(operand.cost, 1)) : value(undefined, add(operand.cost, 1), UNBOUNDED);
      }
      case 'callExpr':
        return this.call(v as unknown as Call, scope);
      case 'listExpr': {
        const elements = (v as { elements: Expr[] }).elements.map((e) => this.walk(e, scope));
        return value('list', add(LIST_CREATE, ...elements.map((e) => e.cost)), elements.length);
      }
      case 'structExpr': {
        const s = v as { messageName: string; entries: Array<{ keyKind: { case: string; value: unknown }; value: Expr }> };
        let cost = s.messageName ? STRUCT_CREATE : MAP_CREATE;
        for (const e of s.entries) {
          if (e.keyKind.case === 'mapKey') cost = add(cost, this.walk(e.keyKind.value as Expr, scope).cost);
          cost = add(cost, this.walk(e.value, scope).cost);
        }
        return value(s.messageName ? undefined : 'map', cost, s.entries.length);
      }
      case 'comprehensionExpr':
        return this.comprehension(v as unknown as Comprehension, scope);
      default:
        return value(undefined, 0);
    }
  }

  private constant(c: { constantKind: { case?: string; value?: unknown } }): Estimate {
    switch (c.constantKind.case) {
      case 'boolValue':
        return value('bool', 0);
      case 'int64Value':
      case 'uint64Value':
        return value('int', 0);
      case 'doubleValue':
        return value('double', 0);
      case 'stringValue':
        return value('string', 0, (c.constantKind.value as string).length);
      case 'bytesValue':
        return value('bytes', 0, (c.constantKind.value as Uint8Array).length);
      default:
        return value(undefined, 0);
    }
  }

  private comprehension(c: Comprehension, scope: ReadonlyMap<string, Estimate>): Estimate {
    const range = this.walk(c.iterRange, scope);
    const init = this.walk(c.accuInit, scope);
    const inner = new Map(scope);
    const t = range.type;
    // A list's items; a map's (or object's) keys, strings.
    let item: Estimate;
    if (t?.kind === 'list' && t.elem) item = typed(t.elem, 0);
    else if (t?.kind === 'map' || t?.kind === 'object') item = value('string', 0, UNBOUNDED);
    else item = value(undefined, 0, UNBOUNDED);
    inner.set(c.iterVar, item);
    if (c.iterVar2) inner.set(c.iterVar2, t?.kind === 'list' ? value('int', 0) : t?.elem ? typed(t.elem, 0) : value(undefined, 0, UNBOUNDED));
    inner.set(c.accuVar, { ...init, cost: 0 });
    const cond = this.walk(c.loopCondition, inner);
    const step = this.walk(c.loopStep, inner);
    const result = this.walk(c.result, inner);
    const cost = add(range.cost, init.cost, mul(range.size, add(cond.cost, step.cost)), result.cost);
    // all/exists give a bool; map/filter a list as long as the range.
    const kind = init.kind === 'bool' ? 'bool' : init.kind;
    return value(kind, cost, init.kind === 'list' ? range.size : 1);
  }

  private call(call: Call, scope: ReadonlyMap<string, Estimate>): Estimate {
    const target = call.target ? this.walk(call.target, scope) : undefined;
    const args = call.args.map((a) => this.walk(a, scope));
    const operands = target ? [target, ...args] : args;
    const base = add(...operands.map((o) => o.cost));
    const fn = call.function;
    const [a, b] = operands;
    const kind: CelKind | undefined = BOOL_RESULTS.has(fn) ? 'bool' : undefined;
    switch (fn) {
      case '_&&_':
      case '_||_':
        return value('bool', base);
      case '_?_:_': {
        const [cond, t, f] = args;
        const pick = t!.cost >= f!.cost ? t! : f!;
        return { ...pick, cost: add(cond!.cost, t!.cost, f!.cost) - Math.min(t!.cost, f!.cost), kind: t!.kind ?? f!.kind };
      }
      case '_[_]': {
        const t = a?.type;
        const elem = t?.kind === 'list' || t?.kind === 'map' ? t.elem : undefined;
        return elem ? typed(elem, add(base, 1)) : value(undefined, add(base, 1), UNBOUNDED);
      }
      case '@in':
        return value('bool', add(base, b && b.kind !== 'map' && b.type?.kind !== 'map' ? Math.max(1, b.size) : 1));
      case 'size':
        return value('int', add(base, 1));
      case '_+_': {
        const textual = a && (a.kind === 'string' || a.kind === 'bytes');
        const size = add(a?.size ?? 1, b?.size ?? 1);
        return value(a?.kind, add(base, textual ? Math.max(1, tenth(size)) : 1), size);
      }
      case 'contains':
        return value('bool', add(base, Math.max(1, mul(tenth(a?.size ?? 1), tenth(b?.size ?? 1)))));
      case 'startsWith':
      case 'endsWith':
        return value('bool', add(base, Math.max(1, tenth(b?.size ?? 1))));
    }
    if (COMPARISONS.has(fn)) return value('bool', add(base, Math.max(1, tenth(Math.min(a?.size ?? 1, b?.size ?? 1)))));
    if (REGEX.has(fn)) {
      const str = a?.size ?? 1;
      const pattern = b?.size ?? 1;
      return value(fn === 'matches' ? 'bool' : fn === 'find' ? 'string' : 'list', add(base, mul(tenth(1 + str), Math.ceil(pattern * 0.25))), str);
    }
    if (LIST_LINEAR.has(fn)) return value(kind, add(base, Math.max(1, a?.size ?? 1)), 1);
    if (fn.startsWith('sets.')) return value('bool', add(base, Math.max(1, mul(a?.size ?? 1, b?.size ?? 1))));
    if (STRING_LINEAR.has(fn)) {
      const size = Math.max(...operands.map((o) => o.size), 1);
      const resultKind = fn === 'string' ? 'string' : fn === 'split' ? 'list' : fn === 'indexOf' || fn === 'lastIndexOf' ? 'int' : kind;
      return value(resultKind, add(base, Math.max(1, tenth(size))), size);
    }
    const result: CelKind | undefined = kind ?? (fn === 'int' ? 'int' : fn === 'double' ? 'double' : fn.startsWith('_') && a ? a.kind : undefined);
    return value(result, add(base, 1), a?.size ?? 1);
  }
}

/** The static estimate of one rule (or messageExpression) whose `self` has type `self`. */
export function estimateRule(expr: Expr, self: CelTypeNode, optionalOldSelf = false): RuleEstimate {
  const w = new Walker(self, optionalOldSelf);
  const e = w.walk(expr, new Map());
  return { cost: e.cost, kind: e.kind === 'intOrString' || e.kind === 'dyn' ? undefined : e.kind, problems: w.problems };
}

/** Whether the expression names `oldSelf` (it is a transition rule). */
export function mentions(expr: Expr, name: string): boolean {
  const v = expr.exprKind.value as Record<string, unknown> | undefined;
  switch (expr.exprKind.case) {
    case 'identExpr':
      return (v as { name: string }).name === name;
    case 'selectExpr':
      return mentions((v as { operand: Expr }).operand, name);
    case 'callExpr': {
      const c = v as unknown as Call;
      return (c.target !== undefined && mentions(c.target, name)) || c.args.some((a) => mentions(a, name));
    }
    case 'listExpr':
      return (v as { elements: Expr[] }).elements.some((e) => mentions(e, name));
    case 'structExpr':
      return (v as { entries: Array<{ keyKind: { case: string; value: unknown }; value: Expr }> }).entries.some(
        (e) => (e.keyKind.case === 'mapKey' && mentions(e.keyKind.value as Expr, name)) || mentions(e.value, name),
      );
    case 'comprehensionExpr': {
      const c = v as unknown as Comprehension;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].some((e) => mentions(e, name));
    }
    default:
      return false;
  }
}

// ---------------------------------------------------------------------------------------------
// The runtime meter

/** Identifiers the instrumented tree reads to charge the meter: `<prefix><cost>`. */
export const METER_PREFIX = '@keelson_cost_';

/** The cost of evaluating `expr` once, loops' iterations not counted (each iteration is metered). */
export function flatCost(expr: Expr): number {
  const v = expr.exprKind.value as Record<string, unknown> | undefined;
  switch (expr.exprKind.case) {
    case 'identExpr':
      return 1;
    case 'selectExpr':
      return 1 + flatCost((v as { operand: Expr }).operand);
    case 'callExpr': {
      const c = v as unknown as Call;
      return 1 + (c.target ? flatCost(c.target) : 0) + c.args.reduce((n, a) => n + flatCost(a), 0);
    }
    case 'listExpr':
      return LIST_CREATE + (v as { elements: Expr[] }).elements.reduce((n, e) => n + flatCost(e), 0);
    case 'structExpr': {
      const s = v as { messageName: string; entries: Array<{ keyKind: { case: string; value: unknown }; value: Expr }> };
      return (
        (s.messageName ? STRUCT_CREATE : MAP_CREATE) +
        s.entries.reduce((n, e) => n + flatCost(e.value) + (e.keyKind.case === 'mapKey' ? flatCost(e.keyKind.value as Expr) : 0), 0)
      );
    }
    case 'comprehensionExpr': {
      const c = v as unknown as Comprehension;
      return flatCost(c.iterRange) + flatCost(c.accuInit) + flatCost(c.result);
    }
    default:
      return 0;
  }
}

let nextId = 1n << 40n;
const node = (kind: string, val: unknown): Expr => ({
  $typeName: 'cel.expr.Expr',
  id: nextId++,
  exprKind: { case: kind, value: val },
});

/**
 * `expr` with every comprehension's step charging the meter: `step` becomes
 * `<meter> ? step : step`, where reading the meter identifier adds one iteration's cost (its
 * condition and step, nested loops' iterations apart) and answers true, or an error once the
 * limit is passed, which ends each further iteration's work at once.
 */
export function instrument(expr: Expr): Expr {
  const v = expr.exprKind.value as Record<string, unknown> | undefined;
  switch (expr.exprKind.case) {
    case 'selectExpr':
      return { ...expr, exprKind: { case: 'selectExpr', value: { ...v, operand: instrument((v as { operand: Expr }).operand) } } };
    case 'callExpr': {
      const c = v as unknown as Call;
      return { ...expr, exprKind: { case: 'callExpr', value: { ...v, target: c.target ? instrument(c.target) : c.target, args: c.args.map(instrument) } } };
    }
    case 'listExpr':
      return { ...expr, exprKind: { case: 'listExpr', value: { ...v, elements: (v as { elements: Expr[] }).elements.map(instrument) } } };
    case 'structExpr': {
      const s = v as { entries: Array<{ keyKind: { case: string; value: unknown }; value: Expr }> };
      const entries = s.entries.map((e) => ({
        ...e,
        keyKind: e.keyKind.case === 'mapKey' ? { ...e.keyKind, value: instrument(e.keyKind.value as Expr) } : e.keyKind,
        value: instrument(e.value),
      }));
      return { ...expr, exprKind: { case: 'structExpr', value: { ...v, entries } } };
    }
    case 'comprehensionExpr': {
      const c = v as unknown as Comprehension;
      const perIteration = Math.max(1, flatCost(c.loopCondition) + flatCost(c.loopStep));
      const step = instrument(c.loopStep);
      const meter = node('identExpr', { $typeName: 'cel.expr.Expr.Ident', name: `${METER_PREFIX}${perIteration}` });
      const metered = node('callExpr', { $typeName: 'cel.expr.Expr.Call', function: '_?_:_', args: [meter, step, step] });
      return {
        ...expr,
        exprKind: {
          case: 'comprehensionExpr',
          value: {
            ...v,
            iterRange: instrument(c.iterRange),
            accuInit: instrument(c.accuInit),
            loopCondition: instrument(c.loopCondition),
            loopStep: metered,
            result: instrument(c.result),
          },
        },
      };
    }
    default:
      return expr;
  }
}
