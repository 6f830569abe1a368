/**
 * CEL for admission: webhook match conditions and ValidatingAdmissionPolicy expressions,
 * compiled once per configuration object and evaluated per request with `@bufbuild/cel`.
 * Values come in as decoded JSON; results go out as plain values (integers as numbers).
 */
import type * as CelLibrary from '@bufbuild/cel';
import { cel, celEnvironment } from '../../util/cel';
import type { Naming } from '../../naming';

export type CelVariables = Record<string, unknown>;

export interface CompiledExpression {
  readonly expression: string;
  /** The result as a plain value; throws CelEvaluationError. */
  evaluate(vars: CelVariables): unknown;
  /**
   * The result as CEL holds it (an int a bigint, a map a CEL map, a quantity its object), for a
   * value that goes back into other expressions (a policy's variables); throws CelEvaluationError.
   */
  evaluateValue(vars: CelVariables): unknown;
}

/** An expression that failed at run time (a missing field, a type mismatch, no such overload). */
export class CelEvaluationError extends Error {}

/** An expression that does not compile; `message` is the parser's. */
export class CelCompileError extends Error {}

/** A CEL value (an error already thrown by the caller) as plain JSON-like data: ints as numbers, maps as objects. */
function plainValue(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return value;
  // A CEL map iterates its entries, a list its items.
  if (cel().lib.isCelMap(value)) return Object.fromEntries(Array.from(value, ([k, v]) => [String(plainValue(k)), plainValue(v)]));
  if (Symbol.iterator in value && !(value instanceof Map)) return Array.from(value as Iterable<unknown>, plainValue);
  return value;
}

/** Compile `expression` for the profile's environment; throws CelCompileError with the parser's message. */
export function compileExpression(expression: string, naming: Pick<Naming, 'word'>): CompiledExpression {
  let run: ReturnType<typeof CelLibrary.plan>;
  try {
    const { lib } = cel();
    run = lib.plan(celEnvironment(naming), lib.parse(expression));
  } catch (err) {
    throw new CelCompileError((err as Error).message);
  }
  const value = (vars: CelVariables): unknown => {
    let result: unknown;
    try {
      result = run(vars as never);
    } catch (err) {
      throw new CelEvaluationError((err as Error).message);
    }
    if (cel().lib.isCelError(result)) throw new CelEvaluationError(result.message);
    return result;
  };
  return { expression, evaluate: (vars) => plainValue(value(vars)), evaluateValue: value };
}

/** Evaluate a compiled expression that must give a boolean (upstream: "expected a bool"). */
export function evaluateBool(compiled: CompiledExpression, vars: CelVariables): boolean {
  const value = compiled.evaluate(vars);
  if (typeof value !== 'boolean')
    throw new CelEvaluationError(`expression '${compiled.expression}' resulted in error: no such overload (got ${typeof value}, expected bool)`);
  return value;
}
