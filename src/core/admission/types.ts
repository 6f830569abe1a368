/**
 * Admission: the plugins the core runs, in order, on every write before it is stored (upstream's
 * admission chain). A plugin has up to two phases, as upstream's do: `admit` (mutating) runs
 * before the type's strategy and may change the object; `validate` runs after the strategy's
 * validation, right before storage, and may only refuse. A refusal is a thrown StatusError,
 * worded by the plugin.
 */
import type { ApiObject, UserInfo } from '../api';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/** What a plugin sees of one write (upstream's admission.Attributes). */
export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  /** Plural resource name. */
  readonly resource: string;
  /** '' for the main resource. */
  readonly subresource: string;
  /** Unset for cluster-scoped types. */
  readonly namespace: string | undefined;
  /** '' on a create whose name is still to be generated. */
  readonly name: string;
  /** The object to store (create, update); `admit` may change it in place. */
  readonly object?: ApiObject;
  /** The stored object (update, delete). */
  readonly oldObject?: ApiObject;
  readonly dryRun: boolean;
  readonly user: UserInfo;
  /** The request's CreateOptions, UpdateOptions or DeleteOptions, as the client sent them. */
  readonly options?: Record<string, unknown>;
  /** Add a `Warning` to the response (webhook and policy warnings). */
  readonly warn?: (text: string) => void;
  /** Add an annotation to the request's audit event. */
  readonly annotate?: (key: string, value: string) => void;
  /**
   * Other versions of the resource that hold the same objects (the core group's Event and the
   * events group's): webhooks and policies matching with `matchPolicy: Equivalent` see the
   * write as such a version when their rules name it and not the request's.
   */
  readonly equivalents?: readonly EquivalentResource[];
  /** On attributes converted for an equivalent version: the request's own kind and resource (AdmissionReview's `requestKind`, `requestResource`). */
  readonly requested?: { readonly group: string; readonly version: string; readonly kind: string; readonly resource: string };
  /** On attributes converted for an equivalent version: an object of that version as the request's. */
  readonly toRequested?: (obj: ApiObject) => ApiObject;
}

/** Another version of a resource holding the same objects, and the conversions there and back. */
export interface EquivalentResource {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly resource: string;
  /** An object of the request's version as this version's (a new object, which may share parts). */
  toEquivalent(obj: ApiObject): ApiObject;
  /** An object of this version as the request's version's. */
  fromEquivalent(obj: ApiObject): ApiObject;
}

export interface AdmissionPlugin {
  /** Upstream's plugin name, as `--enable-admission-plugins` spells it. */
  readonly name: string;
  /** Mutating phase; resolves true when it patched the object with content from outside the server. */
  admit?(attributes: AdmissionAttributes): Promise<void | boolean> | void | boolean;
  /** Validating phase. */
  validate?(attributes: AdmissionAttributes): Promise<void> | void;
}

/** The chain's two phases, as upstream's admission metrics label them. */
export type AdmissionStep = 'admit' | 'validate';

/**
 * What the chain reports of each write, in seconds (the server's `apiserver_admission_*`
 * metrics; a phase or plugin that threw or rejected counts as rejected).
 */
export interface AdmissionMetrics {
  /** One phase of the whole chain: upstream's step metric. */
  step(type: AdmissionStep, operation: AdmissionOperation, rejected: boolean, seconds: number): void;
  /** One plugin's phase: upstream's controller metric. */
  plugin(name: string, type: AdmissionStep, operation: AdmissionOperation, rejected: boolean, seconds: number): void;
  /**
   * One webhook call (`type` admit or validating, as upstream's webhook metrics label it): its
   * time, whether it refused the write, and the status code it ended with (200, the refusal's
   * code, the webhook's HTTP status or 503 for a failed call, 0 for the server's own error).
   */
  webhook(name: string, type: WebhookType, operation: AdmissionOperation, rejected: boolean, seconds: number, code: number): void;
  /** A refusal by a webhook, or a call failure under failurePolicy Fail, by kind of error. */
  webhookRejection(name: string, type: WebhookType, operation: AdmissionOperation, errorType: WebhookErrorType, code: number): void;
  /** A failed call let through by failurePolicy Ignore. */
  webhookFailOpen(name: string, type: WebhookType): void;
  /**
   * A ValidatingAdmissionPolicy validation that failed (false, or an error): once per action its
   * binding took (`deny`, `warn`, `audit`), or `allow` for an error failurePolicy Ignore let
   * through; with how long it took.
   */
  policyCheck(policy: string, binding: string, errorType: PolicyCheckError, action: PolicyCheckAction, seconds: number): void;
}

export type PolicyCheckError = 'no_error' | 'compile_error' | 'invalid_error';
export type PolicyCheckAction = 'allow' | 'deny' | 'warn' | 'audit';

export type WebhookType = 'admit' | 'validating';
export type WebhookErrorType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

/**
 * The chain: every plugin's `admit` in order, then (later in the write) every `validate` in order.
 *
 * Both phases go on synchronously while the plugins answer synchronously (most do: the built-in
 * plugins, webhooks and policies with nothing registered), so a write they let through costs no
 * promise per plugin; the first plugin that answers later turns the rest of the phase async.
 * Either way a phase fails only by a rejected promise, as an async function would.
 */
export class Admission {
  constructor(
    readonly plugins: readonly AdmissionPlugin[] = [],
    private readonly metrics?: AdmissionMetrics,
  ) {
    if (metrics) this.plugins = plugins.map((plugin) => measuredPlugin(plugin, metrics));
  }

  /**
   * The mutating phase. Resolves true when a plugin replaced parts of the object with content
   * from outside the server (a webhook's patch), which the write must then decode again.
   */
  admit(attributes: AdmissionAttributes): boolean | Promise<boolean> {
    return this.metrics ? timed(this.metrics, 'admit', attributes.operation, undefined, this.admitAll, this, attributes) : this.admitAll(attributes);
  }

  validate(attributes: AdmissionAttributes): void | Promise<void> {
    return this.metrics ? timed(this.metrics, 'validate', attributes.operation, undefined, this.validateAll, this, attributes) : this.validateAll(attributes);
  }

  private admitAll(attributes: AdmissionAttributes): boolean | Promise<boolean> {
    const plugins = this.plugins;
    let external = false;
    try {
      for (let i = 0; i < plugins.length; i++) {
        const answer = plugins[i]!.admit?.(attributes);
        if (answer instanceof Promise) return answer.then((first) => this.admitFrom(attributes, i + 1, external || first === true));
        if (answer === true) external = true;
      }
    } catch (err) {
      return Promise.reject(err);
    }
    return external;
  }

  private validateAll(attributes: AdmissionAttributes): void | Promise<void> {
    const plugins = this.plugins;
    try {
      for (let i = 0; i < plugins.length; i++) {
        const answer = plugins[i]!.validate?.(attributes);
        if (answer instanceof Promise) return answer.then(() => this.validateFrom(attributes, i + 1));
      }
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private async admitFrom(attributes: AdmissionAttributes, from: number, external: boolean): Promise<boolean> {
    for (let i = from; i < this.plugins.length; i++) {
      if ((await this.plugins[i]!.admit?.(attributes)) === true) external = true;
    }
    return external;
  }

  private async validateFrom(attributes: AdmissionAttributes, from: number): Promise<void> {
    for (let i = from; i < this.plugins.length; i++) await this.plugins[i]!.validate?.(attributes);
  }
}

/**
 * `fn.call(self, arg)` (a phase of the chain when `plugin` is undefined, else one plugin's
 * phase), timed and reported once it has settled: at once when it answered synchronously, when
 * its promise settles otherwise. A throw or a rejection is a rejected phase; either is passed
 * on unchanged. The call comes taken apart rather than in a closure: every plugin's phases run
 * on every write.
 */
function timed<T, A, S>(
  metrics: AdmissionMetrics,
  type: AdmissionStep,
  operation: AdmissionOperation,
  plugin: string | undefined,
  fn: (this: S, arg: A) => T,
  self: S,
  arg: A,
): T {
  const start = performance.now();
  let answer: T;
  try {
    answer = fn.call(self, arg);
  } catch (err) {
    report(metrics, type, operation, plugin, true, start);
    throw err;
  }
  if (answer instanceof Promise) {
    return answer.then(
      (value: unknown) => {
        report(metrics, type, operation, plugin, false, start);
        return value;
      },
      (err: unknown) => {
        report(metrics, type, operation, plugin, true, start);
        throw err;
      },
    ) as T;
  }
  report(metrics, type, operation, plugin, false, start);
  return answer;
}

function report(
  metrics: AdmissionMetrics,
  type: AdmissionStep,
  operation: AdmissionOperation,
  plugin: string | undefined,
  rejected: boolean,
  start: number,
): void {
  const seconds = (performance.now() - start) / 1000;
  if (plugin === undefined) metrics.step(type, operation, rejected, seconds);
  else metrics.plugin(plugin, type, operation, rejected, seconds);
}

/** `plugin` with each phase it has timed and reported under its name. */
function measuredPlugin(plugin: AdmissionPlugin, metrics: AdmissionMetrics): AdmissionPlugin {
  const { name, admit, validate } = plugin;
  return {
    name,
    ...(admit ? { admit: (attributes: AdmissionAttributes) => timed(metrics, 'admit', attributes.operation, name, admit, plugin, attributes) } : {}),
    ...(validate
      ? { validate: (attributes: AdmissionAttributes) => timed(metrics, 'validate', attributes.operation, name, validate, plugin, attributes) }
      : {}),
  };
}
