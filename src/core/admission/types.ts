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
}

export interface AdmissionPlugin {
  /** Upstream's plugin name, as `--enable-admission-plugins` spells it. */
  readonly name: string;
  /** Mutating phase. */
  admit?(attributes: AdmissionAttributes): Promise<void> | void;
  /** Validating phase. */
  validate?(attributes: AdmissionAttributes): Promise<void> | void;
}

/** The chain: every plugin's `admit` in order, then (later in the write) every `validate` in order. */
export class Admission {
  constructor(readonly plugins: readonly AdmissionPlugin[] = []) {}

  async admit(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) await plugin.admit?.(attributes);
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    for (const plugin of this.plugins) await plugin.validate?.(attributes);
  }
}
