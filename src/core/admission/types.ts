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
}

export interface AdmissionPlugin {
  /** Upstream's plugin name, as `--enable-admission-plugins` spells it. */
  readonly name: string;
  /** Mutating phase; resolves true when it patched the object with content from outside the server. */
  admit?(attributes: AdmissionAttributes): Promise<void | boolean> | void | boolean;
  /** Validating phase. */
  validate?(attributes: AdmissionAttributes): Promise<void> | void;
}

/** The chain: every plugin's `admit` in order, then (later in the write) every `validate` in order. */
export class Admission {
  constructor(readonly plugins: readonly AdmissionPlugin[] = []) {}

  /**
   * The mutating phase. Resolves true when a plugin replaced parts of the object with content
   * from outside the server (a webhook's patch), which the write must then decode again.
   */
  async admit(attributes: AdmissionAttributes): Promise<boolean> {
    let external = false;
    for (const plugin of this.plugins) {
      if ((await plugin.admit?.(attributes)) === true) external = true;
    }
    return external;
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) await plugin.validate?.(attributes);
  }
}
