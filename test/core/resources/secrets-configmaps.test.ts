import type { ConfigMap, Secret } from '../../../src/core/resources';
import { base64Error } from '../../../src/core/resources/config-data';
import { createNaming } from '../../../src/naming';
import { create, definition, stored, update } from './through-store';

const secrets = definition('secrets');
const configmaps = definition('configmaps');
const naming = createNaming('kubernetes');
const b64 = (s: string) => Buffer.from(s).toString('base64');
const meta = { name: 's', namespace: 'default' };

describe('secrets', () => {
  it('defaults type to Opaque and merges stringData into data', async () => {
    const { object, messages } = await create<Secret>(secrets, { metadata: meta, data: { a: b64('old'), b: b64('keep') }, stringData: { a: 'new' } });
    expect(messages).toEqual([]);
    expect(object.type).toBe('Opaque');
    expect(object.data).toEqual({ a: b64('new'), b: b64('keep') });
    expect(object.stringData).toBeUndefined();
  });

  it('wants config keys and base64 values', async () => {
    const { messages } = await create(secrets, { metadata: meta, data: { 'bad key': b64('x'), good: 'not base64!' } });
    expect(messages).toEqual([
      `data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')`,
      'data[good]: Invalid value: "<value redacted>": illegal base64 data at input byte 3',
    ]);
  });

  it('limits data to 1 MiB decoded', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1).toString('base64');
    expect((await create(secrets, { metadata: meta, data: { big } })).messages).toEqual(['data: Too long: may not be more than 1048576 bytes']);
  });

  it('requires the keys of well-known types', async () => {
    expect((await create(secrets, { metadata: meta, type: naming.key('tls'), data: {} })).messages).toEqual([
      'data[tls.crt]: Required value',
      'data[tls.key]: Required value',
    ]);
    expect((await create(secrets, { metadata: meta, type: naming.key('basic-auth') })).errors.map((e) => e.field)).toEqual([
      'data[%s][username]',
      'data[%s][password]',
    ]);
    expect((await create(secrets, { metadata: meta, type: naming.key('service-account-token') })).messages).toEqual([
      `metadata.annotations[${naming.key('service-account.name')}]: Required value`,
    ]);
    expect(
      (await create(secrets, { metadata: meta, type: naming.key('dockerconfigjson'), data: { '.dockerconfigjson': b64('{"auths":{}}') } })).messages,
    ).toEqual([]);
    expect((await create(secrets, { metadata: meta, type: naming.key('dockerconfigjson'), data: { '.dockerconfigjson': b64('nope') } })).errors[0]!.field).toBe(
      'data[.dockerconfigjson]',
    );
  });

  it('keeps type immutable', async () => {
    const old = await stored<Secret>(secrets, { metadata: meta });
    expect((await update(secrets, { ...old, type: 'Custom' }, old)).messages).toEqual(['type: Invalid value: "Custom": field is immutable']);
  });

  it('freezes data once immutable', async () => {
    const old = await stored<Secret>(secrets, { metadata: meta, data: { a: b64('1') }, immutable: true });
    expect((await update(secrets, { ...old, data: { a: b64('2') }, immutable: false }, old)).messages).toEqual([
      'immutable: Forbidden: field is immutable when `immutable` is set',
      'data: Forbidden: field is immutable when `immutable` is set',
    ]);
    expect((await update(secrets, { ...old, stringData: { a: '2' } }, old)).messages).toEqual(['data: Forbidden: field is immutable when `immutable` is set']);
    expect((await update(secrets, { ...old, metadata: { ...old.metadata, labels: { a: 'b' } } }, old)).messages).toEqual([]);
  });

  it('can become immutable', async () => {
    const old = await stored<Secret>(secrets, { metadata: meta, data: { a: b64('1') } });
    expect((await update(secrets, { ...old, data: { a: b64('2') }, immutable: true }, old)).messages).toEqual([]);
  });

  it('selects on type', async () => {
    expect(secrets.selectableFields?.(await stored(secrets, { metadata: meta }))).toEqual({ type: 'Opaque' });
  });
});

describe('base64Error', () => {
  it('matches Go positions', async () => {
    expect(base64Error('YWJj')).toBeUndefined();
    expect(base64Error('YWI=')).toBeUndefined();
    expect(base64Error('YQ==')).toBeUndefined();
    expect(base64Error('YW\nJj')).toBeUndefined();
    expect(base64Error('abc')).toBe('illegal base64 data at input byte 0');
    expect(base64Error('YWJjZ')).toBe('illegal base64 data at input byte 4');
    expect(base64Error('YW*j')).toBe('illegal base64 data at input byte 2');
    expect(base64Error('YQ=a')).toBe('illegal base64 data at input byte 3');
  });
});

describe('configmaps', () => {
  const cm = (extra: Record<string, unknown>) => ({ metadata: { name: 'c', namespace: 'default' }, ...extra });

  it('accepts data and binaryData with distinct keys', async () => {
    expect((await create(configmaps, cm({ data: { 'app.conf': 'x' }, binaryData: { blob: b64('\u0000\u0001') } }))).messages).toEqual([]);
  });

  it('refuses a key present in both and bad keys', async () => {
    expect((await create(configmaps, cm({ data: { a: 'x' }, binaryData: { a: b64('y') } }))).messages).toEqual([
      'data[a]: Invalid value: "a": duplicate of key present in binaryData',
    ]);
    expect((await create(configmaps, cm({ data: { '..x': 'x' } }))).messages).toEqual(['data[..x]: Invalid value: "..x": must not start with \'..\'']);
    expect((await create(configmaps, cm({ binaryData: { 'a/b': b64('x') } }))).errors[0]!.field).toBe('binaryData[a/b]');
  });

  it('limits the whole object to 1 MiB', async () => {
    expect((await create(configmaps, cm({ data: { a: 'x'.repeat(600 * 1024), b: 'y'.repeat(600 * 1024) } }))).messages).toEqual([
      'Too long: may not be more than 1048576 bytes',
    ]);
  });

  it('freezes data and binaryData once immutable', async () => {
    const old = await stored<ConfigMap>(configmaps, cm({ data: { a: '1' }, immutable: true }));
    expect((await update(configmaps, { ...old, data: { a: '2' }, binaryData: { b: b64('x') } }, old)).messages).toEqual([
      'data: Forbidden: field is immutable when `immutable` is set',
      'binaryData: Forbidden: field is immutable when `immutable` is set',
    ]);
  });
});

describe('serviceaccounts', () => {
  it('validates only metadata', async () => {
    const sa = definition('serviceaccounts');
    expect((await create(sa, { metadata: { name: 'builder', namespace: 'ci' }, secrets: [{ name: 'x' }] })).messages).toEqual([]);
    expect((await create(sa, { metadata: { name: 'Builder', namespace: 'ci' } })).errors.map((e) => e.field)).toEqual(['metadata.name']);
  });
});
