/**
 * core/v1 Secret: `type` defaults to Opaque and is immutable; `stringData` is merged into `data`
 * on write and never stored; keys are config keys, values base64, at most 1 MiB in total;
 * well-known types require their keys (upstream ValidateSecret / ValidateSecretUpdate).
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { base64Error, base64Size, MAX_SECRET_SIZE, validateBase64Values, validateConfigKeys, validateImmutableData } from './config-data';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';

export interface Secret extends ApiObject {
  type?: string;
  /** Values are base64. */
  data?: Record<string, string>;
  /** Write-only plain-text values, merged into `data` (winning over it) and not stored. */
  stringData?: Record<string, string>;
  immutable?: boolean;
}

export const SECRET_TYPE_OPAQUE = 'Opaque';

/** The vendor-keyed secret types and keys upstream checks. */
function secretTypes(naming: Naming) {
  return {
    serviceAccountToken: naming.key('service-account-token'),
    serviceAccountNameAnnotation: naming.key('service-account.name'),
    dockercfg: naming.key('dockercfg'),
    dockerConfigJson: naming.key('dockerconfigjson'),
    basicAuth: naming.key('basic-auth'),
    sshAuth: naming.key('ssh-auth'),
    tls: naming.key('tls'),
  };
}

const DATA = FieldPath.root('data');

function decodedJsonError(value: string | undefined): string | undefined {
  if (value === undefined || base64Error(value)) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, 'base64').toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? undefined : 'json: cannot unmarshal into a map';
  } catch (e) {
    return (e as Error).message;
  }
}

function validateSecretType(secret: Secret, types: ReturnType<typeof secretTypes>): FieldError[] {
  const data = secret.data ?? {};
  const has = (k: string) => Object.hasOwn(data, k);
  const errs: FieldError[] = [];
  switch (secret.type) {
    case types.serviceAccountToken:
      if (!secret.metadata?.annotations?.[types.serviceAccountNameAnnotation]) {
        errs.push(fieldErrors.required(FieldPath.root('metadata', 'annotations').key(types.serviceAccountNameAnnotation)));
      }
      break;
    case types.dockercfg:
    case types.dockerConfigJson: {
      const key = secret.type === types.dockercfg ? '.dockercfg' : '.dockerconfigjson';
      if (!has(key)) errs.push(fieldErrors.required(DATA.key(key)));
      else {
        const err = decodedJsonError(data[key]);
        if (err) errs.push(fieldErrors.invalid(DATA.key(key), '<secret contents redacted>', err));
      }
      break;
    }
    case types.basicAuth:
      // Upstream's path here really is `data[%s][username]`.
      if (!has('username') && !has('password')) {
        errs.push(fieldErrors.required(FieldPath.root('data[%s]').key('username')));
        errs.push(fieldErrors.required(FieldPath.root('data[%s]').key('password')));
      }
      break;
    case types.sshAuth:
      if (base64Size(data['ssh-privatekey'] ?? '') === 0) errs.push(fieldErrors.required(FieldPath.root('data[%s]').key('ssh-privatekey')));
      break;
    case types.tls:
      if (!has('tls.crt')) errs.push(fieldErrors.required(DATA.key('tls.crt')));
      if (!has('tls.key')) errs.push(fieldErrors.required(DATA.key('tls.key')));
      break;
    default:
      break;
  }
  return errs;
}

export function validateSecret(secret: Secret, naming: Naming): FieldError[] {
  const errs = [...validateConfigKeys(secret.data, DATA), ...validateBase64Values(secret.data, DATA)];
  const total = Object.values(secret.data ?? {}).reduce((n, v) => n + (typeof v === 'string' ? base64Size(v) : 0), 0);
  if (total > MAX_SECRET_SIZE) errs.push(fieldErrors.tooLong(DATA, MAX_SECRET_SIZE));
  errs.push(...validateSecretType(secret, secretTypes(naming)));
  return errs;
}

/** upstream's Secret printer. */
const SECRET_TABLE: TableDefinition<Secret> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Type',
      'string',
      'Used to facilitate programmatic handling of secret data. More info: https://{keyDomain}/docs/concepts/configuration/secret/#secret-types',
    ),
    column(
      'Data',
      'string',
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (secret, { now }) => ({
    cells: [secret.metadata?.name ?? '', secret.type ?? '', Object.keys(secret.data ?? {}).length, since(secret.metadata?.creationTimestamp, now)],
  }),
};

export const defineSecrets: DefineResource = (naming) =>
  defineTyped<Secret>({
    group: '',
    version: 'v1',
    kind: 'Secret',
    resource: 'secrets',
    singular: 'secret',
    namespaced: true,
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,

    defaults(secret) {
      secret.type ||= SECRET_TYPE_OPAQUE;
      // v1 conversion: stringData overwrites data and is never stored.
      if (secret.stringData && typeof secret.stringData === 'object') {
        secret.data = { ...secret.data };
        for (const [k, v] of Object.entries(secret.stringData)) secret.data[k] = Buffer.from(String(v), 'utf8').toString('base64');
      }
      delete secret.stringData;
    },
    validate: (secret) => validateSecret(secret, naming),
    validateUpdate(secret, old) {
      const errs: FieldError[] = [];
      if ((secret.type ?? '') !== (old.type ?? '')) errs.push(fieldErrors.immutable('type', secret.type ?? ''));
      errs.push(...validateImmutableData(secret, old, ['data']));
      return errs;
    },
    selectableFields: (secret) => ({ type: secret.type ?? '' }),
    table: SECRET_TABLE,
  });
