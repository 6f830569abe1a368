/**
 * Compile-time checks of the CEL expressions objects carry (admission policies' validations,
 * webhooks' match conditions), reported as upstream's compiler reports them: a syntax error, a
 * reference to a variable the environment does not declare (`params` in a policy without
 * `paramKind`), or a result of the wrong type, each as the detail of an Invalid field error.
 *
 * Parsing is `@bufbuild/cel`'s; it has no type checker of its own to offer, so the checks after
 * parsing walk the syntax tree: free identifiers against the declared variables, and the type of
 * a literal result. Expressions whose types only the full checker knows (a field of `object`)
 * pass, as upstream's `dyn` typing lets most of them pass too.
 */
import type * as CelLibrary from '@bufbuild/cel';
import { cel, celFunctionExists } from '../../util/cel';
import { fieldErrors, type FieldError, type FieldPath } from './field-errors';

export interface CelEnvironment {
  /** The variables an expression may name (upstream's declarations: `object`, `request`, ...). */
  readonly variables: readonly string[];
  /** The types the result must have (`bool`, `string`, `null_type`); empty or absent: any. */
  readonly returnTypes?: readonly string[];
}

/**
 * Namespaces of functions in upstream's CEL libraries (`optional.of`, `sets.contains`,
 * `strings.quote`, `cel.bind`, `math.greatest`, `base64.encode`): a call on one of these names
 * is a function, not a reference to a variable.
 */
const FUNCTION_NAMESPACES = new Set(['optional', 'sets', 'strings', 'cel', 'math', 'base64', 'lists', 'format', 'ip']);

/**
 * Functions upstream's environment declares that this server's does not evaluate yet (the
 * authorizer and format libraries' methods, optional values'): accepted when written, as
 * upstream accepts them; they fail when evaluated (docs/ADMISSION.md, "What is left out").
 */
const UPSTREAM_ONLY_FUNCTIONS = new Set([
  'path',
  'group',
  'serviceAccount',
  'resource',
  'subresource',
  'namespace',
  'name',
  'check',
  'allowed',
  'reason',
  'errored',
  'error',
  'fieldSelector',
  'labelSelector',
  'validate',
  'hasValue',
  'value',
  'orValue',
  'or',
  'optMap',
  'optFlatMap',
]);

/** CEL's type identifiers, which are values in every environment. */
const TYPE_IDENTIFIERS = new Set(['bool', 'int', 'uint', 'double', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);

interface Expr {
  id: bigint;
  exprKind: { case: string | undefined; value?: unknown };
}

interface Problem {
  offset: number;
  message: string;
  /** The offset is a call's: shown at the call's opening parenthesis. */
  atParenthesis?: boolean;
}

function children(expr: Expr): Expr[] {
  const v = expr.exprKind.value as Record<string, unknown> | undefined;
  switch (expr.exprKind.case) {
    case 'selectExpr':
      return [v!.operand as Expr];
    case 'callExpr':
      return [...(v!.target ? [v!.target as Expr] : []), ...(v!.args as Expr[])];
    case 'listExpr':
      return v!.elements as Expr[];
    case 'structExpr':
      return (v!.entries as Array<{ keyKind: { case: string; value: unknown }; value: Expr }>).flatMap((e) =>
        e.keyKind.case === 'mapKey' ? [e.keyKind.value as Expr, e.value] : [e.value],
      );
    default:
      return [];
  }
}

/** The root identifier of `a.b.c`, or undefined when the chain starts with something else. */
function rootIdentifier(expr: Expr): string | undefined {
  let e = expr;
  while (e.exprKind.case === 'selectExpr') e = (e.exprKind.value as { operand: Expr }).operand;
  return e.exprKind.case === 'identExpr' ? (e.exprKind.value as { name: string }).name : undefined;
}

/** Free identifiers the environment does not declare (cel-go's "undeclared reference"). */
function undeclared(expr: Expr, bound: ReadonlySet<string>, positions: Record<string, number>, out: Problem[]): void {
  const at = (e: Expr) => positions[String(e.id)] ?? 0;
  switch (expr.exprKind.case) {
    case 'identExpr': {
      const name = (expr.exprKind.value as { name: string }).name;
      if (!bound.has(name) && !TYPE_IDENTIFIERS.has(name)) out.push({ offset: at(expr), message: `undeclared reference to '${name}' (in container '')` });
      return;
    }
    case 'comprehensionExpr': {
      const c = expr.exprKind.value as Record<string, Expr | string>;
      undeclared(c.iterRange as Expr, bound, positions, out);
      undeclared(c.accuInit as Expr, bound, positions, out);
      const inner = new Set([...bound, c.iterVar as string, c.accuVar as string, ...(c.iterVar2 ? [c.iterVar2 as string] : [])]);
      for (const part of ['loopCondition', 'loopStep', 'result']) undeclared(c[part] as Expr, inner, positions, out);
      return;
    }
    case 'callExpr': {
      const call = expr.exprKind.value as { function: string; target?: Expr; args: Expr[] };
      const root = call.target ? rootIdentifier(call.target) : undefined;
      if (call.target && root !== undefined && !bound.has(root) && FUNCTION_NAMESPACES.has(root)) {
        // `cel.bind(name, init, body)` binds `name` in `body`.
        if (root === 'cel' && call.function === 'bind' && call.args.length === 3 && call.args[0]!.exprKind.case === 'identExpr') {
          undeclared(call.args[1]!, bound, positions, out);
          undeclared(call.args[2]!, new Set([...bound, (call.args[0]!.exprKind.value as { name: string }).name]), positions, out);
          return;
        }
        // A namespaced function (`optional.of`, `sets.contains`, `strings.quote`): its arguments only.
        for (const arg of call.args) undeclared(arg, bound, positions, out);
        return;
      }
      // Operators (`_+_`, `@in`) are the language's; any other name must be a function the environment has.
      const name = call.function;
      if (!name.startsWith('_') && !name.startsWith('@') && !celFunctionExists(name) && !UPSTREAM_ONLY_FUNCTIONS.has(name)) {
        // cel-go places a call at its opening parenthesis; the parser here at its name (or the dot before it).
        out.push({ offset: at(expr), message: `undeclared reference to '${name}' (in container '')`, atParenthesis: true });
      }
      break;
    }
  }
  for (const child of children(expr)) undeclared(child, bound, positions, out);
}

/** The type name of a literal result, or undefined when only a type checker could tell. */
function literalType(expr: Expr): string | undefined {
  if (expr.exprKind.case !== 'constExpr') return undefined;
  switch ((expr.exprKind.value as { constantKind: { case?: string } }).constantKind.case) {
    case 'boolValue':
      return 'bool';
    case 'int64Value':
      return 'int';
    case 'uint64Value':
      return 'uint';
    case 'doubleValue':
      return 'double';
    case 'stringValue':
      return 'string';
    case 'bytesValue':
      return 'bytes';
    case 'nullValue':
      return 'null_type';
    default:
      return undefined;
  }
}

/** cel-go's display of one error: position, message, the source line and a caret under the column. */
export function display(source: string, line: number, column: number, message: string): string {
  const text = (source.split('\n')[line - 1] ?? '').replace(/\t/g, ' ');
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(Math.min(column, text.length))}^`;
}

export function lineAndColumn(source: string, offset: number): { line: number; column: number } {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - (before.lastIndexOf('\n') + 1) };
}

/**
 * Why `expression` does not compile in `env` (upstream's CompileCELExpression detail:
 * `compilation failed: ERROR: <input>:1:1: ...`, or `must evaluate to bool`), or undefined.
 */
export function celCompileError(expression: string, env: CelEnvironment): string | undefined {
  let parsed: ReturnType<typeof CelLibrary.parse>;
  try {
    parsed = cel().lib.parse(expression);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const at = /^<input>:(\d+):(\d+): ([\s\S]*)$/.exec(message);
    const detail = at ? display(expression, Number(at[1]), Math.max(0, Number(at[2]) - 1), `Syntax error: ${at[3]}`) : `ERROR: <input>: ${message}`;
    return `compilation failed: ${detail}`;
  }
  const root = parsed.expr as unknown as Expr | undefined;
  if (!root) return 'compilation failed: ERROR: <input>:1:1: empty expression';
  const problems: Problem[] = [];
  undeclared(root, new Set(env.variables), (parsed.sourceInfo?.positions ?? {}) as Record<string, number>, problems);
  if (problems.length > 0) {
    for (const p of problems) {
      if (!p.atParenthesis) continue;
      const paren = expression.indexOf('(', p.offset);
      if (paren >= 0) p.offset = paren;
    }
    problems.sort((a, b) => a.offset - b.offset);
    const shown = problems.map((p) => {
      const { line, column } = lineAndColumn(expression, p.offset);
      return display(expression, line, column, p.message);
    });
    return `compilation failed: ${shown.join('\n')}`;
  }
  const wanted = env.returnTypes ?? [];
  const got = literalType(root);
  if (wanted.length > 0 && got !== undefined && !wanted.includes(got)) {
    return wanted.length === 1 ? `must evaluate to ${wanted[0]}` : `must evaluate to one of [${wanted.join(' ')}]`;
  }
  return undefined;
}

/** An Invalid error at `path` when `expression` does not compile (upstream's convertCELErrorToValidationError). */
export function validateCelExpression(expression: string, env: CelEnvironment, path: FieldPath): FieldError[] {
  const reason = celCompileError(expression, env);
  return reason === undefined ? [] : [fieldErrors.invalid(path, expression, reason)];
}
