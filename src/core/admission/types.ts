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

/**
 * The chain: every plugin's `admit` in order, then (later in the write) every `validate` in order.
 *
 * Both phases go on synchronously while the plugins answer synchronously (most do: the built-in
 * plugins, webhooks and policies with nothing registered), so a write they let through costs no
 * promise per plugin; the first plugin that answers later turns the rest of the phase async.
 * Either way a phase fails only by a rejected promise, as an async function would.
 */
export class Admission {
  constructor(readonly plugins: readonly AdmissionPlugin[] = []) {}

  /**
   * The mutating phase. Resolves true when a plugin replaced parts of the object with content
   * from outside the server (a webhook's patch), which the write must then decode again.
   */
  admit(attributes: AdmissionAttributes): boolean | Promise<boolean> {
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

  validate(attributes: AdmissionAttributes): void | Promise<void> {
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
