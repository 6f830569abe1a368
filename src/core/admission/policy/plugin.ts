/**
 * ValidatingAdmissionPolicy, upstream's admission plugin of the same name (GA in 1.30): every
 * binding whose policy matches the write evaluates the policy's CEL validations against the
 * object, the stored object, the request, the namespace and each parameter object the binding
 * selects. A failed validation is acted on as the binding says: `Deny` refuses the write with
 * the validation's reason and message, `Warn` adds a warning, `Audit` an audit annotation.
 * `auditAnnotations` add `<policy>/<key>` annotations. Errors (an expression that fails, a
 * parameter that cannot be found or a parameter type that is not served) follow the policy's
 * failurePolicy.
 */
import type { ApiObject } from '../../api';
import type { Naming } from '../../../naming';
import { REASON_CODES, type StatusError, forbidden, type StatusReason } from '../../../status';
import { labelSelectorMatches } from '../../validation/selectors';
import { CelCompileError, CelEvaluationError, type CelVariables, type CompiledExpression, compileExpression, evaluateBool } from '../cel';
import type { AdmissionReader } from '../reader';
import type { AdmissionAttributes, AdmissionMetrics, AdmissionPlugin, PolicyCheckError } from '../types';
import { isExemptFromDynamicAdmission, matchingAttributes, namespaceSelectorMatches, objectSelectorMatches, ruleMatches } from '../webhook/matching';
import { admissionRequest } from '../webhook/review';
import type { MatchResources, PolicySource, ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from './types';

export interface PolicyAdmissionOptions {
  naming: Naming;
  source: PolicySource;
  reader: AdmissionReader;
  /** Where each failed validation is counted (upstream's `apiserver_validating_admission_policy_*`). */
  metrics?: Pick<AdmissionMetrics, 'policyCheck'>;
}

type Compiled<T> = { ok: T } | { error: string };

interface CompiledPolicy {
  validations: Array<{ expression: Compiled<CompiledExpression>; message?: string; reason?: string; messageExpression?: Compiled<CompiledExpression> }>;
  matchConditions: Array<{ name: string; expression: Compiled<CompiledExpression> }>;
  variables: Array<{ name: string; expression: Compiled<CompiledExpression> }>;
  auditAnnotations: Array<{ key: string; valueExpression: Compiled<CompiledExpression> }>;
}

const POLICY_REASONS: Record<string, StatusReason> = {
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  Invalid: 'Invalid',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
};

function tryCompile(expression: string | undefined, naming: Naming): Compiled<CompiledExpression> {
  try {
    return { ok: compileExpression(expression ?? '', naming) };
  } catch (err) {
    return { error: err instanceof CelCompileError ? `compilation failed: ${err.message}` : String(err) };
  }
}

function compilePolicy(policy: ValidatingAdmissionPolicy, naming: Naming): CompiledPolicy {
  const spec = policy.spec ?? {};
  return {
    validations: (spec.validations ?? []).map((v) => ({
      expression: tryCompile(v.expression, naming),
      message: v.message,
      reason: v.reason,
      messageExpression: v.messageExpression ? tryCompile(v.messageExpression, naming) : undefined,
    })),
    matchConditions: (spec.matchConditions ?? []).map((c) => ({ name: c.name, expression: tryCompile(c.expression, naming) })),
    variables: (spec.variables ?? []).map((v) => ({ name: v.name, expression: tryCompile(v.expression, naming) })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a) => ({ key: a.key, valueExpression: tryCompile(a.valueExpression, naming) })),
  };
}

/** A validation's failure, before the binding's actions are applied. */
interface Violation {
  message: string;
  reason: StatusReason;
  expressionIndex?: number;
  /** How long the validation took, in seconds (for the policy check metrics). */
  seconds?: number;
}

/**
 * An error the failure policy decides on: an expression that does not compile or failed when
 * evaluated (upstream's `compile_error`, `invalid_error` in the policy check metrics), or a
 * policy or binding that cannot be used (its parameters).
 */
class PolicyError extends Error {
  constructor(
    message: string,
    readonly kind: 'compile' | 'invalid' | 'config' = 'config',
  ) {
    super(message);
  }
}

function evaluate(compiled: Compiled<CompiledExpression>, vars: CelVariables, asCel = false): unknown {
  if ('error' in compiled) throw new PolicyError(compiled.error, 'compile');
  try {
    return asCel ? compiled.ok.evaluateValue(vars) : compiled.ok.evaluate(vars);
  } catch (err) {
    if (err instanceof CelEvaluationError) throw new PolicyError(`expression '${compiled.ok.expression}' resulted in error: ${err.message}`, 'invalid');
    throw err;
  }
}

function evaluateCondition(compiled: Compiled<CompiledExpression>, vars: CelVariables): boolean {
  if ('error' in compiled) throw new PolicyError(compiled.error, 'compile');
  try {
    return evaluateBool(compiled.ok, vars);
  } catch (err) {
    if (err instanceof CelEvaluationError) throw new PolicyError(`expression '${compiled.ok.expression}' resulted in error: ${err.message}`, 'invalid');
    throw err;
  }
}

/** `variables.<name>`, each evaluated when first read (a later variable may use an earlier one). */
function lazyVariables(list: CompiledPolicy['variables'], vars: CelVariables): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const v of list) {
    let done = false;
    let value: unknown;
    Object.defineProperty(out, v.name, {
      enumerable: true,
      get() {
        if (!done) {
          // Kept as CEL holds it: the value goes back into the policy's other expressions.
          value = evaluate(v.expression, vars, true);
          done = true;
        }
        return value;
      },
    });
  }
  return out;
}

export function validatingAdmissionPolicy(options: PolicyAdmissionOptions): AdmissionPlugin {
  const { naming, source, reader } = options;
  const admissionGroup = naming.group('admissionregistration');
  const admissionDomain = naming.group('admission');
  const compiledPolicies = new WeakMap<ValidatingAdmissionPolicy, CompiledPolicy>();
  const compiled = (p: ValidatingAdmissionPolicy) => {
    let c = compiledPolicies.get(p);
    if (!c) compiledPolicies.set(p, (c = compilePolicy(p, naming)));
    return c;
  };
  const namespaceLabels = async (name: string) => (await reader.get({ group: '', version: 'v1', resource: 'namespaces', name }))?.metadata?.labels;

  function rulesTake(match: MatchResources, a: AdmissionAttributes, rulesRequired: boolean): boolean {
    const named = (rule: { resourceNames?: string[] }) =>
      !(rule.resourceNames ?? []).length || rule.resourceNames!.includes(a.name || a.object?.metadata?.name || '');
    const rules = match.resourceRules ?? [];
    if (rules.length > 0 || rulesRequired) {
      if (!rules.some((r) => ruleMatches(r, a) && named(r))) return false;
    }
    return !(match.excludeResourceRules ?? []).some((r) => ruleMatches(r, a) && named(r));
  }

  /**
   * The attributes `match` takes the write with: the request's, or an equivalent version's under
   * `matchPolicy: Equivalent`; undefined when it does not match.
   */
  async function matching(match: MatchResources | undefined, a: AdmissionAttributes, rulesRequired: boolean): Promise<AdmissionAttributes | undefined> {
    if (!match) return rulesRequired ? undefined : a;
    const target = matchingAttributes(a, match.matchPolicy, (x) => rulesTake(match, x, rulesRequired));
    if (!target) return undefined;
    if (!(await namespaceSelectorMatches(match, target, namespaceLabels))) return undefined;
    return objectSelectorMatches(match, target) ? target : undefined;
  }

  /** The parameter objects of a binding: undefined when the policy takes none; [] when none were found. */
  async function paramsFor(
    policy: ValidatingAdmissionPolicy,
    binding: ValidatingAdmissionPolicyBinding,
    a: AdmissionAttributes,
  ): Promise<ApiObject[] | undefined> {
    const kind = policy.spec?.paramKind;
    if (!kind) return undefined;
    const type = source.paramType(kind.apiVersion ?? '', kind.kind ?? '');
    if (!type) throw new PolicyError(`failed to configure policy: failed to find resource referenced by paramKind: '${kind.apiVersion}, Kind=${kind.kind}'`);
    const ref = binding.spec?.paramRef;
    if (!ref) throw new PolicyError(`failed to configure binding: no paramRef specified`);
    let namespace = '';
    if (type.namespaced) {
      namespace = ref.namespace || a.namespace || '';
      if (!namespace)
        throw new PolicyError('failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources');
    }
    const pick = ref.name ? { name: ref.name } : { selector: ref.selector ?? {} };
    return source.params(type, namespace, pick);
  }

  /** Evaluate one policy for one parameter (or none): the violations, and the audit annotations. */
  function run(
    policy: ValidatingAdmissionPolicy,
    c: CompiledPolicy,
    base: CelVariables,
    param: ApiObject | null,
  ): { violations: Violation[]; annotations: Array<[string, string]> } {
    const vars: CelVariables = { ...base, params: param };
    vars.variables = lazyVariables(c.variables, vars);
    for (const m of c.matchConditions) {
      if (!evaluateCondition(m.expression, vars)) return { violations: [], annotations: [] };
    }
    const violations: Violation[] = [];
    c.validations.forEach((v, index) => {
      const start = performance.now();
      if (evaluateCondition(v.expression, vars)) return;
      let message = v.message ?? '';
      if (v.messageExpression) {
        try {
          const m = evaluate(v.messageExpression, vars);
          if (typeof m === 'string' && m.trim() !== '' && !m.includes('\n')) message = m;
        } catch (err) {
          if (!(err instanceof PolicyError)) throw err;
        }
      }
      if (!message) message = `failed expression: ${'ok' in v.expression ? v.expression.ok.expression : ''}`;
      violations.push({
        message,
        reason: POLICY_REASONS[v.reason ?? 'Invalid'] ?? 'Invalid',
        expressionIndex: index,
        seconds: (performance.now() - start) / 1000,
      });
    });
    const annotations: Array<[string, string]> = [];
    for (const an of c.auditAnnotations) {
      const value = evaluate(an.valueExpression, vars);
      if (value === null || value === undefined) continue;
      if (typeof value !== 'string')
        throw new PolicyError(
          `valueExpression '${'ok' in an.valueExpression ? an.valueExpression.ok.expression : ''}' resulted in error: value must be a string or null`,
          'invalid',
        );
      annotations.push([`${policy.metadata?.name}/${an.key}`, value]);
    }
    return { violations, annotations };
  }

  return {
    name: 'ValidatingAdmissionPolicy',
    // Nothing to do, at once, with no bindings or for an exempt request (the chain stays synchronous).
    validate(a) {
      if (isExemptFromDynamicAdmission(a, admissionGroup)) return;
      const bindings = source.bindings();
      if (bindings.length === 0) return;
      return validateWith(a, bindings);
    },
  };

  async function validateWith(a: AdmissionAttributes, bindings: ReturnType<typeof source.bindings>): Promise<void> {
    const policies = new Map(source.policies().map((p) => [p.metadata?.name ?? '', p]));
    // The CEL variables per attributes evaluated (the request's, or an equivalent version's).
    const bases = new Map<AdmissionAttributes, CelVariables>();
    const denials: StatusError[] = [];
    const audits: Array<Record<string, unknown>> = [];
    for (const binding of bindings) {
      const policyName = binding.spec?.policyName ?? '';
      const policy = policies.get(policyName);
      if (!policy) continue;
      // The policy sees the write as the version its constraints match; the binding narrows the request.
      const target = await matching(policy.spec?.matchConstraints, a, true);
      if (!target) continue;
      if (!(await matching(binding.spec?.matchResources, a, false))) continue;
      const bindingName = binding.metadata?.name ?? '';
      const actions = binding.spec?.validationActions ?? [];
      /** Upstream's policy check metrics: one count per action a failed validation took. */
      const check = (v: Violation, errorType: PolicyCheckError) => {
        for (const action of actions) {
          const taken = action === 'Deny' ? 'deny' : action === 'Warn' ? 'warn' : action === 'Audit' ? 'audit' : undefined;
          if (taken) options.metrics?.policyCheck(policyName, bindingName, errorType, taken, v.seconds ?? 0);
        }
      };
      const act = (v: Violation, errorType?: PolicyCheckError) => {
        if (errorType) check(v, errorType);
        if (actions.includes('Deny')) {
          // Upstream words it as admission's Forbidden, then swaps in the validation's reason and code.
          const message = `ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}' denied request: ${v.message}`;
          const err = forbidden({ group: a.group, resource: a.resource }, a.name || a.object?.metadata?.name || '', message);
          err.status.reason = v.reason;
          err.status.code = REASON_CODES[v.reason].http;
          err.status.details = { ...err.status.details, causes: [{ message }] };
          denials.push(err);
        }
        if (actions.includes('Warn')) a.warn?.(`Validation failed for ValidatingAdmissionPolicy '${policyName}' with binding '${bindingName}': ${v.message}`);
        if (actions.includes('Audit')) {
          audits.push({
            message: v.message,
            policy: policyName,
            binding: bindingName,
            ...(v.expressionIndex !== undefined ? { expressionIndex: v.expressionIndex } : {}),
            validationActions: actions,
          });
        }
      };
      try {
        let base = bases.get(target);
        if (!base) {
          base = {
            object: target.object ?? null,
            oldObject: target.oldObject ?? null,
            request: admissionRequest(target, naming.groups.meta),
            namespaceObject: a.namespace ? ((await reader.get({ group: '', version: 'v1', resource: 'namespaces', name: a.namespace })) ?? null) : null,
          };
          bases.set(target, base);
        }
        const c = compiled(policy);
        const params = await paramsFor(policy, binding, a);
        if (params !== undefined && params.length === 0) {
          if ((binding.spec?.paramRef?.parameterNotFoundAction ?? 'Deny') === 'Deny') {
            throw new PolicyError('failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction');
          }
          continue;
        }
        for (const param of params ?? [null]) {
          const { violations, annotations } = run(policy, c, base, param);
          for (const v of violations) act(v, 'no_error');
          for (const [k, v] of annotations) a.annotate?.(k, v);
        }
      } catch (err) {
        if (!(err instanceof PolicyError)) throw err;
        // An expression's error is counted (a policy or binding that cannot be used is not).
        const errorType = err.kind === 'compile' ? 'compile_error' : err.kind === 'invalid' ? 'invalid_error' : undefined;
        if (policy.spec?.failurePolicy === 'Ignore') {
          // Let through: upstream counts it as `allow`.
          if (errorType) options.metrics?.policyCheck(policyName, bindingName, errorType, 'allow', 0);
          continue;
        }
        act({ message: err.message, reason: 'Invalid' }, errorType);
      }
    }
    if (audits.length > 0) a.annotate?.(`validation.policy.${admissionDomain}/validation_failure`, JSON.stringify(audits));
    if (denials.length > 0) throw denials[0];
  }
}

/** Does a parameter object satisfy a binding's paramRef selector? (for sources that list and filter). */
export function paramSelected(selector: Parameters<typeof labelSelectorMatches>[0], obj: ApiObject): boolean {
  return labelSelectorMatches(selector ?? {}, obj.metadata?.labels);
}
