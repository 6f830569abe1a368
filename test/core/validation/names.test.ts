import { isConfigMapKey, isDns1123Label, isDns1123Subdomain, isQualifiedName, isValidLabelValue, validateName } from '../../../src/core/validation/names';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('DNS-1123 names', () => {
  it('accepts subdomains up to 253 characters and rejects longer ones', () => {
    expect(isDns1123Subdomain('example.com')).toEqual([]);
    expect(isDns1123Subdomain('a'.repeat(253))).toEqual([]);
    expect(isDns1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
  });

  it('gives the upstream subdomain message', () => {
    expect(isDns1123Subdomain('Foo')).toEqual([SUBDOMAIN_MSG]);
    expect(isDns1123Subdomain('-a')).toEqual([SUBDOMAIN_MSG]);
    expect(isDns1123Subdomain('')).toEqual([SUBDOMAIN_MSG]);
  });

  it('gives the upstream label message, with its double space', () => {
    expect(isDns1123Label('my-name')).toEqual([]);
    expect(isDns1123Label('My_name')).toEqual([LABEL_MSG]);
    expect(isDns1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  it('says a dotted label "must not contain dots"', () => {
    expect(isDns1123Label('a.b')).toEqual(['must not contain dots']);
  });
});

describe('qualified names and label values', () => {
  it('accepts prefixed and plain keys', () => {
    expect(isQualifiedName('app')).toEqual([]);
    expect(isQualifiedName('example.com/My.Name_1')).toEqual([]);
  });

  it('reports each part separately', () => {
    expect(isQualifiedName('/a')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('a/')).toEqual([
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
    expect(isQualifiedName('Bad_/x')[0]).toMatch(/^prefix part a lowercase RFC 1123 subdomain/);
    expect(isQualifiedName(`${'a'.repeat(64)}`)).toEqual(['name part must be no more than 63 characters']);
    expect(isQualifiedName('a/b/c')[0]).toMatch(
      /^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e.g. 'example.com\/MyName'\)$/,
    );
  });

  it('holds every limit at its edge, for plain names, prefixes and names after a prefix', () => {
    const sub = (n: number) => `${'a'.repeat(n - 4)}.com`;
    expect(isQualifiedName('a'.repeat(63))).toEqual([]);
    expect(isQualifiedName(`${sub(253)}/${'b'.repeat(63)}`)).toEqual([]);
    expect(isQualifiedName(`${sub(254)}/b`)).toEqual(['prefix part must be no more than 253 characters']);
    expect(isQualifiedName(`example.com/${'b'.repeat(64)}`)).toEqual(['name part must be no more than 63 characters']);
    expect(isQualifiedName('Example.com/b')[0]).toMatch(/^prefix part a lowercase RFC 1123 subdomain/);
    // Length limits count UTF-8 bytes: a two-byte character fails the pattern, and counts twice.
    expect(isQualifiedName(`${'a'.repeat(61)}é`)).toHaveLength(1);
    expect(isQualifiedName(`${'a'.repeat(62)}é`)).toEqual([
      'name part must be no more than 63 characters',
      expect.stringMatching(/^name part must consist of/),
    ]);
    expect(isValidLabelValue(`${'a'.repeat(62)}é`)).toEqual(['must be no more than 63 characters', expect.stringMatching(/^a valid label must be/)]);
    expect(isDns1123Label(`${'a'.repeat(63)}`)).toEqual([]);
    expect(isDns1123Label(`${'a'.repeat(64)}`)).toEqual(['must be no more than 63 characters']);
    expect(isDns1123Label('abc\n')[0]).toMatch(/^a lowercase RFC 1123 label/);
  });

  it('allows empty label values and limits them to 63', () => {
    expect(isValidLabelValue('')).toEqual([]);
    expect(isValidLabelValue('a'.repeat(63))).toEqual([]);
    expect(isValidLabelValue('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
    expect(isValidLabelValue('-x')[0]).toMatch(/^a valid label must be an empty string or consist of/);
  });
});

describe('config keys', () => {
  it('accepts dots, dashes and underscores', () => {
    expect(isConfigMapKey('key.name_1-x')).toEqual([]);
  });
  it('rejects other characters and dot names', () => {
    expect(isConfigMapKey('a b')[0]).toMatch(/^a valid config key must consist of alphanumeric characters, '-', '_' or '.'/);
    expect(isConfigMapKey('.')).toEqual(["must not be '.'"]);
    expect(isConfigMapKey('..')).toEqual(["must not be '..'"]);
    expect(isConfigMapKey('..a')).toEqual(["must not start with '..'"]);
  });
});

describe('validateName', () => {
  it('checks path-segment names', () => {
    expect(validateName('system:admin', 'pathSegment')).toEqual([]);
    expect(validateName('.', 'pathSegment')).toEqual(["may not be '.'"]);
    expect(validateName('..', 'pathSegment')).toEqual(["may not be '..'"]);
    expect(validateName('a/b%c', 'pathSegment')).toEqual(["may not contain '/'", "may not contain '%'"]);
  });

  it('lets generateName prefixes end with a dash', () => {
    expect(validateName('web-', 'dns1123Subdomain', true)).toEqual([]);
    expect(validateName('web-', 'dns1123Label', true)).toEqual([]);
    expect(validateName('web-', 'dns1123Subdomain')).toEqual([SUBDOMAIN_MSG]);
    expect(validateName('.', 'pathSegment', true)).toEqual([]);
  });
});
