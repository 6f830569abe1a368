/**
 * Conversion between a custom resource's versions (issue 53), as apiextensions-apiserver's
 * pkg/apiserver/conversion does it.
 *
 * `Webhook`: one ConversionReview per call (v1, or v1beta1 where `conversionReviewVersions`
 * names it first), POSTed over TLS to `clientConfig.url` (verified with `caBundle`); objects
 * already in the desired version are not sent. The answer is checked as upstream checks it (the
 * review's kind, the uid, `result.status`, as many objects as sent, each of the desired
 * apiVersion and the same kind, name, namespace and uid), and each converted object gets the
 * original's metadata back but for its labels and annotations. Any failure is an error whose
 * message is upstream's (`conversion webhook for <group>/<version>, Kind=<Kind> ...`), answered
 * as a 500: never a partly converted or wrong object.
 *
 * After any conversion (`None` too), the object is coerced to the target version's schema as
 * upstream's schemaCoercingConverter does: unknown fields pruned, and, on the way out of storage,
 * defaults filled.
 */
import { randomUUID } from 'node:crypto';
import type { ApiObject } from '../api';
import type { Clock } from '../../clock';
import type { Naming } from '../../naming';
import { internalError } from '../../status';
import { deepCopy } from '../../util/json-values';
import { callWebhook } from '../admission/webhook/client';
import { FieldPath } from '../validation/field-errors';
import { validateAnnotations, validateLabels } from '../validation/metadata';
import type { CustomResourceDefinitionObject } from './crd';
import type { ServiceResolver } from '../services/resolver';

/** upstream's default for a conversion webhook call (the REST client's timeout). */
export const DEFAULT_CONVERSION_TIMEOUT_MS = 30_000;

export interface ConversionParts {
  naming: Naming;
  clock: Clock;
  /** Each webhook call's timeout; default 30 s, as upstream. */
  timeoutMs?: number;
  /** Where `clientConfig.service` references lead; without it such a webhook's call fails. */
  services?: ServiceResolver;
}

interface WebhookConfig {
  clientConfig?: { url?: string; caBundle?: string; service?: { namespace: string; name: string; path?: string; port?: number } };
  conversionReviewVersions?: string[];
}

/** Go's `%T` of a decoded JSON value, for upstream's messages. */
function goType(value: unknown): string {
  if (value === null) return '<nil>';
  if (Array.isArray(value)) return '[]interface {}';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    default:
      return 'map[string]interface {}';
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A plain error on the way to the 500 answered for it. */
class ConversionFailure extends Error {}

/** The multi-version conversion of one definition: calls its webhook, several objects per call. */
export class WebhookConverter {
  private readonly group: string;
  private readonly kind: string;
  private readonly webhook: WebhookConfig;
  /** Calls made (tests count them: a list is one call). */
  calls = 0;

  constructor(
    crd: CustomResourceDefinitionObject,
    private readonly parts: ConversionParts,
  ) {
    this.group = crd.spec.group;
    this.kind = (crd.status?.acceptedNames ?? crd.spec.names).kind;
    this.webhook = ((crd.spec as { conversion?: { webhook?: WebhookConfig } }).conversion?.webhook ?? {}) as WebhookConfig;
  }

  /**
   * `objs` (of `fromApiVersion`) as `toApiVersion`'s, in order; those already of that version are
   * copied, not sent. `list`: the objects are a list's (upstream words its messages per item then).
   * Rejects with a 500 StatusError.
   */
  async convert(objs: readonly ApiObject[], fromApiVersion: string, toApiVersion: string, list = objs.length > 1): Promise<ApiObject[]> {
    try {
      return await this.convertOrFail(objs, fromApiVersion, toApiVersion, list);
    } catch (err) {
      throw internalError((err as Error).message);
    }
  }

  private async convertOrFail(objs: readonly ApiObject[], fromApiVersion: string, toApiVersion: string, list: boolean): Promise<ApiObject[]> {
    const gvk = `${fromApiVersion}, Kind=${this.kind}`;
    const send = objs.filter((o) => o.apiVersion !== toApiVersion);
    if (send.length === 0) return objs.map((o) => deepCopy(o));
    const review = this.reviewVersion();
    if (!review) throw new ConversionFailure('no supported conversion review versions');
    const apiVersion = `${this.parts.naming.groups.apiextensions}/${review}`;
    const uid = randomUUID();
    const body = JSON.stringify({ kind: 'ConversionReview', apiVersion, request: { uid, desiredAPIVersion: toApiVersion, objects: send } });
    this.calls++;
    let answer: unknown;
    try {
      answer = await callWebhook({
        config: this.webhook.clientConfig ?? {},
        body,
        timeoutMs: this.parts.timeoutMs ?? DEFAULT_CONVERSION_TIMEOUT_MS,
        clock: this.parts.clock,
        resolveService: this.parts.services && ((svc) => this.parts.services!.resolve(svc)),
      });
    } catch (err) {
      throw new ConversionFailure(`conversion webhook for ${gvk} failed: ${(err as Error).message}`);
    }
    let converted: unknown[];
    try {
      converted = this.convertedObjects(answer, review, apiVersion, uid);
    } catch (err) {
      throw new ConversionFailure(`conversion webhook for ${gvk} failed: ${(err as Error).message}`);
    }
    if (converted.length !== send.length)
      throw new ConversionFailure(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${send.length}`);
    const out: ApiObject[] = [];
    let at = 0;
    for (const original of objs) {
      if (original.apiVersion === toApiVersion) {
        out.push(deepCopy(original));
        continue;
      }
      const index = at++;
      // upstream counts the index of its later checks from 1 in a list, from 0 for one object.
      const said = list ? `invalid converted object at index ${index + 1}` : 'invalid object at index 0';
      const value = converted[index];
      if (!isObject(value)) {
        throw new ConversionFailure(
          list
            ? `conversion webhook for ${gvk} returned invalid converted object at index ${index}: Object 'Kind' is missing in '${JSON.stringify(value)}'`
            : `Object 'Kind' is missing in '${JSON.stringify(value)}'`,
        );
      }
      const obj = value as ApiObject;
      if (obj.apiVersion !== toApiVersion) {
        throw new ConversionFailure(
          `conversion webhook for ${gvk} returned ${said}: invalid groupVersion (expected ${toApiVersion}, received ${String(obj.apiVersion ?? '')})`,
        );
      }
      if (obj.kind !== original.kind) {
        throw new ConversionFailure(
          `conversion webhook for ${gvk} returned ${said}: invalid kind (expected ${original.kind}, received ${String(obj.kind ?? '')})`,
        );
      }
      const mismatch = differentIdentity(original, obj);
      if (mismatch) throw new ConversionFailure(`conversion webhook for ${gvk} returned ${list ? said : 'invalid object'}: ${mismatch}`);
      const metaError = restoreObjectMeta(original, obj);
      if (metaError) {
        throw new ConversionFailure(`conversion webhook for ${gvk} returned invalid metadata${list ? ` in object at index ${index + 1}` : ''}: ${metaError}`);
      }
      out.push(obj);
    }
    return out;
  }

  /** The first review version this server speaks among those the definition asks for. */
  private reviewVersion(): string | undefined {
    return (this.webhook.conversionReviewVersions ?? []).find((v) => v === 'v1' || v === 'v1beta1');
  }

  private convertedObjects(answer: unknown, review: string, apiVersion: string, uid: string): unknown[] {
    const r = isObject(answer) ? answer : {};
    if (review === 'v1' && (r.apiVersion !== apiVersion || r.kind !== 'ConversionReview')) {
      const [g, v] = typeof r.apiVersion === 'string' && r.apiVersion.includes('/') ? r.apiVersion.split('/', 2) : ['', String(r.apiVersion ?? '')];
      throw new Error(`expected webhook response of ${apiVersion}, Kind=ConversionReview, got ${g}/${v}, Kind=${String(r.kind ?? '')}`);
    }
    const response = r.response;
    if (!isObject(response)) throw new Error('no response provided');
    // v1beta1 answers are not checked for their uid, as upstream does not.
    if (review === 'v1' && (response.uid ?? '') !== uid) throw new Error(`expected response.uid="${uid}", got "${String(response.uid ?? '')}"`);
    const result = isObject(response.result) ? response.result : {};
    if (result.status !== 'Success') {
      if (typeof result.message === 'string' && result.message) throw new Error(result.message);
      throw new Error(`response.result.status was '${String(result.status ?? '')}', not 'Success'`);
    }
    return Array.isArray(response.convertedObjects) ? response.convertedObjects : [];
  }
}

/** upstream's validateConvertedObject: the same object, by kind, name, namespace and uid. */
function differentIdentity(original: ApiObject, converted: ApiObject): string | undefined {
  const a = original.metadata ?? {};
  const b = isObject(converted.metadata) ? (converted.metadata as Record<string, unknown>) : {};
  if (original.kind !== converted.kind) return `must have the same kind: ${original.kind} != ${String(converted.kind)}`;
  for (const [field, label] of [
    ['name', 'name'],
    ['namespace', 'namespace'],
    ['uid', 'UID'],
  ] as const) {
    const want = (a[field] as string | undefined) ?? '';
    const got = typeof b[field] === 'string' ? (b[field] as string) : '';
    if (want !== got) return `must have the same ${label}: ${want} != ${got}`;
  }
  return undefined;
}

/**
 * upstream's restoreObjectMeta: the converted object gets the original's metadata, with the
 * labels and annotations the webhook answered (checked as a write's are). Returns the error's text.
 */
function restoreObjectMeta(original: ApiObject, converted: ApiObject): string | undefined {
  const answered: unknown = converted.metadata;
  if (answered === undefined) return 'missing metadata in converted object';
  if (!isObject(answered)) return `invalid metadata of type ${goType(answered)} in converted object`;
  const meta = deepCopy((original.metadata ?? {}) as Record<string, unknown>);
  for (const field of ['labels', 'annotations'] as const) {
    const value = answered[field];
    if (value === undefined || value === null) {
      delete meta[field];
      continue;
    }
    if (!isObject(value)) return `invalid metadata.${field} of type ${goType(value)} in converted object`;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') return `metadata.${field}[${k}] must be a string, but is ${goType(v)} in converted object`;
    }
    const map = value as Record<string, string>;
    const errs =
      field === 'labels' ? validateLabels(map, FieldPath.root('metadata', 'labels')) : validateAnnotations(map, FieldPath.root('metadata', 'annotation'));
    if (errs.length) {
      const msgs = [...new Set(errs.map((e) => e.message))];
      return msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]`;
    }
    meta[field] = map;
  }
  converted.metadata = meta;
  return undefined;
}
