/**
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook, as upstream's dispatchers run them.
 * Mutating webhooks are called one after another in configuration-name order, each seeing the
 * object as the previous ones left it, their JSON patches applied in turn; a webhook with
 * `reinvocationPolicy: IfNeeded` is called once more when a later one changed the object.
 * Validating webhooks are called all at once; the first refusal (in configuration order)
 * answers. A dry run refuses to call a webhook that may have side effects.
 */
import type { ApiObject } from '../../api';
import type { Clock } from '../../../clock';
import type { Naming } from '../../../naming';
import { StatusError, badRequest, internalError } from '../../../status';
import { applyJsonPatch } from '../../patch';
import type { ServiceResolver } from '../../services/resolver';
import { CelCompileError, CelEvaluationError, type CompiledExpression, compileExpression, evaluateBool } from '../cel';
import type { AdmissionReader } from '../reader';
import type { AdmissionAttributes, AdmissionMetrics, AdmissionPlugin } from '../types';
import { WebhookAnswerError, callWebhook } from './client';
import { isExemptFromDynamicAdmission, matchingAttributes, namespaceSelectorMatches, objectSelectorMatches, rulesMatch } from './matching';
import { type AdmissionRequest, admissionRequest, reviewBody, verifyResponse } from './review';
import type { Webhook, WebhookConfiguration, WebhookConfigurationSource, WebhookCredentialResolver } from './types';

export interface WebhookAdmissionOptions {
  naming: Naming;
  source: WebhookConfigurationSource;
  reader: AdmissionReader;
  credentials?: WebhookCredentialResolver;
  /** The time a call's timeout runs on. */
  clock: Clock;
  /** Where each call is reported (upstream's `apiserver_admission_webhook_*`). */
  metrics?: AdmissionMetrics;
  /** Where `clientConfig.service` references lead; without it such a webhook's call fails. */
  services?: ServiceResolver;
}

const DEFAULT_TIMEOUT_SECONDS = 10;

interface CompiledWebhook {
  configuration: string;
  webhook: Webhook;
  /** Compiled match conditions, or the reason they do not compile (the call then follows failurePolicy). */
  conditions: Array<{ name: string; compiled: CompiledExpression }> | Error;
}

function compile(configuration: WebhookConfiguration, naming: Naming): CompiledWebhook[] {
  return (configuration.webhooks ?? []).map((webhook) => {
    let conditions: CompiledWebhook['conditions'];
    try {
      conditions = (webhook.matchConditions ?? []).map((c) => ({ name: c.name, compiled: compileExpression(c.expression, naming) }));
    } catch (err) {
      conditions = err instanceof CelCompileError ? err : new Error(String(err));
    }
    return { configuration: configuration.metadata?.name ?? '', webhook, conditions };
  });
}

/**
 * How a call ended the write, carried to the metrics with its code, then thrown as `status`: a
 * call that failed under failurePolicy Fail (upstream's `calling_webhook_error`), or the
 * webhook's refusal (`no_error`).
 */
class WebhookDenial {
  constructor(
    readonly errorType: 'calling_webhook_error' | 'no_error',
    readonly code: number,
    readonly status: StatusError,
  ) {}
}

/** upstream's ToStatusErr: a webhook's refusal as the client sees it. */
function refusal(webhookName: string, status: { code?: number; message?: string; reason?: string; details?: unknown } | undefined): StatusError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const message = status?.message ? `${deniedBy}: ${status.message}` : status?.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(status?.reason ? { reason: status.reason as never } : {}),
    ...(status?.details ? { details: status.details as never } : {}),
    code,
  });
}

class Dispatcher {
  private readonly compiled = new WeakMap<WebhookConfiguration, CompiledWebhook[]>();
  private readonly admissionGroup: string;
  private readonly admissionApiVersion: string;

  constructor(
    private readonly options: WebhookAdmissionOptions,
    private readonly mutating: boolean,
  ) {
    this.admissionGroup = options.naming.group('admissionregistration');
    this.admissionApiVersion = `${options.naming.group('admission')}/v1`;
  }

  private hooks(): CompiledWebhook[] {
    const configurations = this.mutating ? this.options.source.mutating() : this.options.source.validating();
    const out: CompiledWebhook[] = [];
    for (const configuration of configurations) {
      let hooks = this.compiled.get(configuration);
      if (!hooks) this.compiled.set(configuration, (hooks = compile(configuration, this.options.naming)));
      out.push(...hooks);
    }
    return out;
  }

  private readonly namespaceLabels = async (name: string): Promise<Record<string, string> | undefined> =>
    (await this.options.reader.get({ group: '', version: 'v1', resource: 'namespaces', name }))?.metadata?.labels;

  /**
   * The attributes the write calls `hook` with: the request's, or an equivalent version's under
   * `matchPolicy: Equivalent`; undefined when it does not call it. Throws where the answer is an
   * error (a failing match condition under Fail, a dry run).
   */
  async shouldCall(hook: CompiledWebhook, a: AdmissionAttributes, request: () => AdmissionRequest): Promise<AdmissionAttributes | undefined> {
    const { webhook } = hook;
    const target = matchingAttributes(a, webhook.matchPolicy, (x) => rulesMatch(webhook.rules, x));
    if (!target) return undefined;
    if (!(await namespaceSelectorMatches(webhook, target, this.namespaceLabels))) return undefined;
    if (!objectSelectorMatches(webhook, target)) return undefined;
    const targetRequest = target === a ? request : () => admissionRequest(target, this.options.naming.groups.meta);
    if (!(await this.conditionsMatch(hook, target, targetRequest))) return undefined;
    if (a.dryRun && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
      throw badRequest(`admission webhook "${webhook.name}" does not support dry run`);
    }
    return target;
  }

  private async conditionsMatch(hook: CompiledWebhook, a: AdmissionAttributes, request: () => AdmissionRequest): Promise<boolean> {
    const { conditions, webhook } = hook;
    let failure: string | undefined;
    if (conditions instanceof Error) failure = `compilation failed: ${conditions.message}`;
    else if (conditions.length > 0) {
      const vars = { object: a.object ?? null, oldObject: a.oldObject ?? null, request: request() };
      const errors: string[] = [];
      for (const c of conditions) {
        try {
          // Any false condition skips the webhook, even when another one errs.
          if (!evaluateBool(c.compiled, vars)) return false;
        } catch (err) {
          if (!(err instanceof CelEvaluationError)) throw err;
          errors.push(`expression '${c.compiled.expression}' resulted in error: ${err.message}`);
        }
      }
      if (errors.length > 0) failure = errors.join('; ');
    }
    if (failure === undefined) return true;
    if (webhook.failurePolicy === 'Ignore') return false;
    throw internalError(`failed calling webhook "${webhook.name}": failed to evaluate match conditions: ${failure}`);
  }

  /**
   * Call `hook` for `a`; resolves true when it patched the object. A call that fails follows
   * the failure policy: `Ignore` goes on (noted in the audit event), `Fail` refuses with 500.
   * `written` is the request's own object, which a patch to an equivalent version's reaches converted back.
   */
  async call(hook: CompiledWebhook, a: AdmissionAttributes, round: number, index: number, written?: ApiObject): Promise<boolean> {
    const metrics = this.options.metrics;
    const { name } = hook.webhook;
    const type = this.mutating ? 'admit' : 'validating';
    const start = performance.now();
    const seconds = () => (performance.now() - start) / 1000;
    try {
      const patched = await this.callOnce(hook, a, round, index, written, () => metrics?.webhookFailOpen(name, type));
      metrics?.webhook(name, type, a.operation, false, seconds(), 200);
      return patched;
    } catch (err) {
      const denial = err instanceof WebhookDenial ? err : undefined;
      if (metrics) {
        // As upstream counts them: a refusal, a failed call under Fail, or the server's own error.
        const code = denial?.code ?? 0;
        metrics.webhookRejection(name, type, a.operation, denial?.errorType ?? 'apiserver_internal_error', code);
        metrics.webhook(name, type, a.operation, true, seconds(), code);
      }
      throw denial ? denial.status : err;
    }
  }

  private async callOnce(
    hook: CompiledWebhook,
    a: AdmissionAttributes,
    round: number,
    index: number,
    written?: ApiObject,
    failedOpen?: () => void,
  ): Promise<boolean> {
    const { webhook } = hook;
    const request = admissionRequest(a, this.options.naming.groups.meta);
    let callCode = 503;
    let response;
    try {
      const answer = await callWebhook({
        config: webhook.clientConfig ?? {},
        body: reviewBody(request, this.admissionApiVersion),
        timeoutMs: (webhook.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
        clock: this.options.clock,
        credentials: this.options.credentials,
        resolveService: this.options.services && ((svc) => this.options.services!.resolve(svc)),
      }).catch((err: Error) => {
        if (err instanceof WebhookAnswerError) callCode = err.code;
        throw new Error(`failed to call webhook: ${err.message}`);
      });
      response = verifyResponse(answer, request.uid, this.admissionApiVersion, this.mutating);
    } catch (err) {
      const reason = `failed calling webhook "${webhook.name}": ${(err as Error).message}`;
      if (webhook.failurePolicy === 'Ignore') {
        const phase = this.mutating ? 'mutating' : 'validating';
        a.annotate?.(`failed-open.${phase}.webhook.${this.options.naming.group('admission')}/round_${round}_index_${index}`, webhook.name);
        failedOpen?.();
        return false;
      }
      throw new WebhookDenial('calling_webhook_error', callCode, internalError(reason));
    }
    for (const w of response.warnings ?? []) a.warn?.(w);
    for (const [k, v] of Object.entries(response.auditAnnotations ?? {})) a.annotate?.(`${webhook.name}/${k}`, v);
    if (!response.allowed) {
      const refused = refusal(webhook.name, response.status);
      throw new WebhookDenial('no_error', refused.status.code ?? 400, refused);
    }
    if (!this.mutating || !response.patch || !a.object) return false;
    this.applyPatch(a.object, response.patch, webhook.name);
    // Called as an equivalent version: the patched object goes back to the request's version.
    if (a.toRequested && written) replaceContent(written, a.toRequested(a.object));
    a.annotate?.(
      `mutation.webhook.${this.options.naming.group('admission')}/round_${round}_index_${index}`,
      JSON.stringify({ configuration: hook.configuration, webhook: webhook.name, mutated: true }),
    );
    return true;
  }

  /** Apply a webhook's JSON patch to the object in place; apiVersion and kind stay the request's. */
  private applyPatch(object: ApiObject, patch: string, webhookName: string): void {
    let patched: unknown;
    try {
      const ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as unknown;
      if (!Array.isArray(ops)) throw new Error('the patch is not a JSON array of operations');
      patched = applyJsonPatch(JSON.parse(JSON.stringify(object)), ops as Array<Record<string, unknown>>);
    } catch (err) {
      throw internalError(`failed calling webhook "${webhookName}": JSON patch: ${err instanceof StatusError ? err.status.message : (err as Error).message}`);
    }
    if (typeof patched !== 'object' || patched === null || Array.isArray(patched)) {
      throw internalError(`failed calling webhook "${webhookName}": the patched object is not an object`);
    }
    replaceContent(object, patched as ApiObject);
  }

  /** False at once when no webhook is configured or the request is exempt (the admission chain stays synchronous). */
  mutate(a: AdmissionAttributes): boolean | Promise<boolean> {
    if (isExemptFromDynamicAdmission(a, this.admissionGroup)) return false;
    const hooks = this.hooks();
    if (hooks.length === 0) return false;
    return this.mutateWith(a, hooks);
  }

  private async mutateWith(a: AdmissionAttributes, hooks: CompiledWebhook[]): Promise<boolean> {
    let request: AdmissionRequest | undefined;
    const lazyRequest = () => (request ??= admissionRequest(a, this.options.naming.groups.meta));
    // Each call: its hook, its position, and how many patches had been applied once it answered.
    const calls: Array<{ hook: CompiledWebhook; index: number; patchesAfter: number }> = [];
    let patches = 0;
    for (const [index, hook] of hooks.entries()) {
      request = undefined;
      const target = await this.shouldCall(hook, a, lazyRequest);
      if (!target) continue;
      if (await this.call(hook, target, 0, index, a.object)) patches++;
      calls.push({ hook, index, patchesAfter: patches });
    }
    // Reinvocation: a webhook that asked for it is called again when a later one changed the object.
    for (const { hook, index, patchesAfter } of calls) {
      if (hook.webhook.reinvocationPolicy !== 'IfNeeded' || patches === patchesAfter) continue;
      request = undefined;
      const target = await this.shouldCall(hook, a, lazyRequest);
      if (!target) continue;
      if (await this.call(hook, target, 1, index, a.object)) patches++;
    }
    return patches > 0;
  }

  /** Nothing to do, at once, when no webhook is configured or the request is exempt. */
  validate(a: AdmissionAttributes): void | Promise<void> {
    if (isExemptFromDynamicAdmission(a, this.admissionGroup)) return;
    const hooks = this.hooks();
    if (hooks.length === 0) return;
    return this.validateWith(a, hooks);
  }

  private async validateWith(a: AdmissionAttributes, hooks: CompiledWebhook[]): Promise<void> {
    let request: AdmissionRequest | undefined;
    const lazyRequest = () => (request ??= admissionRequest(a, this.options.naming.groups.meta));
    // Upstream numbers validating calls among the webhooks that are called (mutating ones among all).
    const chosen: Array<{ hook: CompiledWebhook; index: number; target: AdmissionAttributes }> = [];
    for (const hook of hooks) {
      const target = await this.shouldCall(hook, a, lazyRequest);
      if (target) chosen.push({ hook, index: chosen.length, target });
    }
    const results = await Promise.allSettled(chosen.map(({ hook, index, target }) => this.call(hook, target, 0, index)));
    const refused = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (refused) throw refused.reason;
  }
}

/** Make `object` hold `content`, keeping its own apiVersion and kind (a patched object's, or one converted back). */
function replaceContent(object: ApiObject, content: ApiObject): void {
  const { apiVersion, kind } = object;
  for (const key of Object.keys(object)) delete (object as Record<string, unknown>)[key];
  Object.assign(object, content, { apiVersion, kind });
}

export function mutatingAdmissionWebhook(options: WebhookAdmissionOptions): AdmissionPlugin {
  const dispatcher = new Dispatcher(options, true);
  return { name: 'MutatingAdmissionWebhook', admit: (a) => dispatcher.mutate(a) };
}

export function validatingAdmissionWebhook(options: WebhookAdmissionOptions): AdmissionPlugin {
  const dispatcher = new Dispatcher(options, false);
  return { name: 'ValidatingAdmissionWebhook', validate: (a) => dispatcher.validate(a) };
}
