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
}

/** An expression that failed at run time (a missing field, a type mismatch, no such overload). */
export class CelEvaluationError extends Error {}

/** An expression that does not compile; `message` is the parser's. */
export class CelCompileError extends Error {}

export function plainValue(value: unknown): unknown {
  if (cel().lib.isCelError(value)) throw new CelEvaluationError(value.message);
  if (typeof value === 'bigint') return Number(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array) return value;
  if (Symbol.iterator in value && !(value instanceof Map)) {
    const items = Array.from(value as Iterable<unknown>);
    // A CEL map iterates its keys; read it through its getter.
    const map = value as { get?: (k: unknown) => unknown; has?: (k: unknown) => boolean };
    if (typeof map.get === 'function' && typeof map.has === 'function') {
      return Object.fromEntries(items.map((k) => [String(plainValue(k)), plainValue(map.get!(k))]));
    }
    return items.map(plainValue);
  }
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
  return {
    expression,
    evaluate(vars) {
      let result: unknown;
      try {
        result = run(vars as never);
      } catch (err) {
        throw new CelEvaluationError((err as Error).message);
      }
      return plainValue(result);
    },
  };
}

/** Evaluate a compiled expression that must give a boolean (upstream: "expected a bool"). */
export function evaluateBool(compiled: CompiledExpression, vars: CelVariables): boolean {
  const value = compiled.evaluate(vars);
  if (typeof value !== 'boolean') throw new CelEvaluationError(`expression '${compiled.expression}' resulted in error: no such overload (got ${typeof value}, expected bool)`);
  return value;
}
