/**
 * A schema node's `x-…-validations` rules compiled once (memo keyed by the schema node, so a
 * definition's rules are compiled when it is first validated or served and never again), as
 * upstream's cel.Compile does: each rule parsed, its references checked (`self`, `oldSelf`),
 * its field selections checked against the schema, its result a bool, its messageExpression a
 * string; whether it is a transition rule (names `oldSelf`); its estimated cost; and the plan
 * that evaluates it with a meter on its loops (cost.ts).
 */
import type * as CelLibrary from '@bufbuild/cel';
import { cel, celEnvironment } from '../../../../util/cel';
import { celCompileError, display, lineAndColumn } from '../../cel';
import type { SchemaNode } from '../node';
import type { ValidationRule } from '../types';
import { validFieldPath } from '../structural';
import { type Expr, estimateRule, flatCost, instrument, mentions, METER_PREFIX } from './cost';
import { type CelTypeNode, celTypeOf } from './types';

/** apiserver's PerCallLimit: the most one evaluation of one expression may cost. */
export const PER_CALL_LIMIT = 1_000_000;

export type Program = (vars: Record<string, unknown>) => unknown;

export interface CompiledRule {
  readonly rule: ValidationRule;
  /** Why it does not compile (upstream's detail), or undefined. */
  readonly error: { readonly required: boolean; readonly detail: string } | undefined;
  /** Absent for an empty rule or one that does not compile. */
  readonly program: Program | undefined;
  /** Names `oldSelf`: evaluated on update only (or with an optional oldSelf). */
  readonly usesOldSelf: boolean;
  readonly optionalOldSelf: boolean;
  /** The estimated most one evaluation costs. */
  readonly cost: number;
  /** What one evaluation costs outside its loops (whose iterations are metered). */
  readonly baseCost: number;
  readonly messageError: string | undefined;
  readonly messageProgram: Program | undefined;
  readonly messageCost: number;
  readonly messageBaseCost: number;
  /** The rule's fieldPath as path segments under the node (`fieldPath`), when set and valid. */
  readonly fieldPath: readonly { readonly name: string; readonly key: boolean }[] | undefined;
}

export interface NodeRules {
  readonly type: CelTypeNode;
  readonly rules: readonly CompiledRule[];
  /** The schema's `type`, the value of the Invalid errors. */
  readonly schemaType: string;
}

interface Parsed {
  expr: Expr;
  positions: Record<string, number>;
}

function parse(source: string): Parsed {
  const p = cel().lib.parse(source) as unknown as { expr: Expr; sourceInfo?: { positions?: Record<string, number> } };
  return { expr: p.expr, positions: p.sourceInfo?.positions ?? {} };
}

const VARIABLES = { variables: ['self', 'oldSelf'] };

/** The first compile error of `source` in upstream's words (`compilation failed: ERROR: …`), plus its tree when it parses. */
function check(source: string, self: CelTypeNode, optionalOldSelf: boolean): { error?: string; parsed?: Parsed; kind?: string; cost: number } {
  const syntax = celCompileError(source, VARIABLES);
  if (syntax !== undefined) return { error: syntax, cost: 0 };
  const parsed = parse(source);
  const est = estimateRule(parsed.expr, self, optionalOldSelf);
  if (est.problems.length > 0) {
    const shown = est.problems
      .map((p) => ({ ...p, offset: parsed.positions[String(p.id)] ?? 0 }))
      .sort((a, b) => a.offset - b.offset)
      .map((p) => {
        const { line, column } = lineAndColumn(source, p.offset);
        return display(source, line, column, p.message);
      });
    return { error: `compilation failed: ${shown.join('\n')}`, cost: est.cost };
  }
  return { parsed, kind: est.kind, cost: est.cost };
}

/** The profile's word (`kubernetes`, `platform`) from its validations extension's name. */
function profileWord(extensionName: string): string {
  return /^x-(.+)-validations$/.exec(extensionName)?.[1] ?? 'kubernetes';
}

function plan(word: string, expr: Expr): Program {
  const { lib } = cel();
  const run = lib.plan(celEnvironment({ word }), instrument(expr) as unknown as Parameters<typeof CelLibrary.plan>[1]);
  return run as unknown as Program;
}

function compileRule(rule: ValidationRule, self: CelTypeNode, node: SchemaNode, word: string): CompiledRule {
  const text = typeof rule.rule === 'string' ? rule.rule : '';
  const optionalOldSelf = rule.optionalOldSelf === true;
  let fieldPath: CompiledRule['fieldPath'];
  if (typeof rule.fieldPath === 'string' && rule.fieldPath.trim() !== '') {
    const found = validFieldPath(rule.fieldPath, node.schema, true);
    if (typeof found !== 'string') fieldPath = fieldPathSegments(rule.fieldPath, node);
  }
  const empty: CompiledRule = {
    rule,
    error: undefined,
    program: undefined,
    usesOldSelf: false,
    optionalOldSelf,
    cost: 0,
    baseCost: 0,
    messageError: undefined,
    messageProgram: undefined,
    messageCost: 0,
    messageBaseCost: 0,
    fieldPath,
  };
  if (text.trim() === '') return empty;
  const c = check(text, self, optionalOldSelf);
  if (c.error !== undefined) return { ...empty, error: { required: false, detail: c.error } };
  if (c.kind !== undefined && c.kind !== 'bool')
    return { ...empty, cost: c.cost, error: { required: false, detail: 'cel expression must evaluate to a bool' } };
  const usesOldSelf = mentions(c.parsed!.expr, 'oldSelf');
  const compiled: CompiledRule = { ...empty, usesOldSelf, cost: c.cost, baseCost: flatCost(c.parsed!.expr), program: plan(word, c.parsed!.expr) };
  const messageExpression = typeof rule.messageExpression === 'string' ? rule.messageExpression : '';
  if (messageExpression === '') return compiled;
  const m = check(messageExpression, self, false);
  if (m.error !== undefined) return { ...compiled, messageError: `messageExpression ${m.error}` };
  if (m.kind !== undefined && m.kind !== 'string') return { ...compiled, messageError: 'messageExpression must evaluate to a string' };
  return { ...compiled, messageCost: m.cost, messageBaseCost: flatCost(m.parsed!.expr), messageProgram: plan(word, m.parsed!.expr) };
}

/** The rule's fieldPath as segments (`.a.b` → a, b; `['k']` a key of a map). */
function fieldPathSegments(path: string, node: SchemaNode): CompiledRule['fieldPath'] {
  const out: { name: string; key: boolean }[] = [];
  let at: SchemaNode | undefined = node;
  for (const m of path.matchAll(/\.([^.[\]]+)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]/g)) {
    const name = m[1] ?? m[2]!.replace(/\\(.)/g, '$1');
    const byProperty: boolean = at?.properties !== undefined;
    out.push({ name, key: !byProperty });
    at = byProperty ? at?.properties?.get(name) : at?.additional;
  }
  return out;
}

/** Shared by every server in the process: a pure memo keyed by the (constant) compiled schema nodes. */
const memo = new WeakMap<SchemaNode, { plain?: NodeRules | null; root?: NodeRules | null }>();

/**
 * The compiled rules of a schema node (undefined when it has none); `resourceRoot` for the
 * custom resource's root, whose `self` has apiVersion, kind and metadata.
 */
export function nodeRules(node: SchemaNode, resourceRoot = false): NodeRules | undefined {
  let m = memo.get(node);
  if (!m) memo.set(node, (m = {}));
  const slot = resourceRoot ? 'root' : 'plain';
  const known = m[slot];
  if (known !== undefined) return known ?? undefined;
  const raw = node.schema[node.ext.validations as `x-${string}`];
  let result: NodeRules | null = null;
  if (Array.isArray(raw) && raw.length > 0) {
    const type = celTypeOf(node, resourceRoot);
    const word = profileWord(node.ext.validations);
    result = {
      type,
      schemaType: typeof node.schema.type === 'string' ? node.schema.type : '',
      rules: raw.map((r) => compileRule((r ?? {}) as ValidationRule, type, node, word)),
    };
  }
  m[slot] = result;
  return result ?? undefined;
}

/** Whether the node or anything under it (properties, additionalProperties, items, allOf) has rules. */
export function subtreeHasRules(node: SchemaNode): boolean {
  return subtreeMemo(node);
}

const subtree = new WeakMap<SchemaNode, boolean>();
function subtreeMemo(node: SchemaNode): boolean {
  let v = subtree.get(node);
  if (v === undefined) {
    subtree.set(node, false);
    const raw = node.schema[node.ext.validations as `x-${string}`];
    v =
      (Array.isArray(raw) && raw.length > 0) ||
      [...(node.properties?.values() ?? [])].some(subtreeMemo) ||
      (node.additional !== undefined && subtreeMemo(node.additional)) ||
      (node.items !== undefined && subtreeMemo(node.items)) ||
      (node.allOf ?? []).some(subtreeMemo);
    subtree.set(node, v);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// Evaluation with a meter

/** A run's cost so far and its limit. */
class Meter {
  cost = 0;
  exceeded = false;
  constructor(readonly limit: number) {}
}

let active: { vars: Record<string, unknown>; meter: Meter } | undefined;
let errorValue: unknown;

/** The activation every program reads: the current run's variables, and the meter's identifiers. */
const activation = new Proxy(
  {},
  {
    get(_target, name) {
      const run = active!;
      if (typeof name === 'string' && name.startsWith(METER_PREFIX)) {
        const m = run.meter;
        if (m.exceeded) return errorValue;
        m.cost += Number(name.slice(METER_PREFIX.length));
        if (m.cost > m.limit) {
          m.exceeded = true;
          errorValue ??= cel().lib.celError('operation cancelled: actual cost limit exceeded');
          return errorValue;
        }
        return true;
      }
      return run.vars[name as string];
    },
  },
);

export interface RunResult {
  /** The result (a CEL value), or the evaluation's error message. */
  readonly value: unknown;
  readonly error: string | undefined;
  /** What the run cost: the expression's loop-free part plus every iteration metered. */
  readonly cost: number;
  /** The per-call limit was passed (upstream: `operation cancelled: actual cost limit exceeded`). */
  readonly exceeded: boolean;
}

/** Run a compiled program with `vars`, metered against `limit`; `baseCost` is its loop-free cost. */
export function runProgram(program: Program, vars: Record<string, unknown>, baseCost: number, limit = PER_CALL_LIMIT): RunResult {
  const meter = new Meter(limit);
  meter.cost = baseCost;
  const previous = active;
  active = { vars, meter };
  let value: unknown;
  try {
    value = program(activation as Record<string, unknown>);
  } finally {
    active = previous;
  }
  if (meter.exceeded) return { value: undefined, error: 'operation cancelled: actual cost limit exceeded', cost: meter.cost, exceeded: true };
  if (cel().lib.isCelError(value)) return { value: undefined, error: (value as { message: string }).message, cost: meter.cost, exceeded: false };
  return { value, error: undefined, cost: meter.cost, exceeded: false };
}
