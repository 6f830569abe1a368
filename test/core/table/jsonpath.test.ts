/**
 * client-go's JSONPath as the CRD table convertor and selectable fields run it: every form of
 * the grammar, upstream's parse and evaluation errors word for word, missing keys, Go's value
 * types in filters, the printing of results, kubectl's relaxed form, and selectable field values.
 * Expected outputs are upstream's (client-go util/jsonpath tests, v0.32), with Go structs given
 * as JSON maps (whose keys Go walks sorted).
 */
import { JsonPathError, parseJsonPath, parseJsonPathTemplate, relaxedJsonPathExpression, selectableField, selectableFieldValue } from '../../../src/core/table';

const run = (template: string, data: unknown, allowMissingKeys = false) => parseJsonPathTemplate(template, { allowMissingKeys }).execute(data);
const parseError = (template: string): string => {
  try {
    parseJsonPathTemplate(template);
  } catch (e) {
    expect(e).toBeInstanceOf(JsonPathError);
    return (e as Error).message;
  }
  return 'nil';
};
const evalError = (template: string, data: unknown, allowMissingKeys = false): string => {
  const path = parseJsonPathTemplate(template, { allowMissingKeys });
  try {
    path.execute(data);
  } catch (e) {
    expect(e).toBeInstanceOf(JsonPathError);
    return (e as Error).message;
  }
  return 'nil';
};

const types = {
  bools: [true, false, true, false],
  integers: [1, 2, 3, 4],
  floats: [1.0, 2.2, 3.3, 4.0],
  strings: ['one', 'two', 'three', 'four'],
  interfaces: [true, 'one', 1, 1.1],
  maps: [
    { name: 'one', value: 1 },
    { name: 'two', value: 2.02 },
    { name: 'three', value: 3.03 },
    { name: 'four', value: 4.04 },
  ],
};

const store = {
  Name: 'jsonpath',
  Book: [
    { Category: 'reference', Author: 'Nigel Rees', Title: 'Sayings of the Centurey', Price: 8.95 },
    { Category: 'fiction', Author: 'Evelyn Waugh', Title: 'Sword of Honour', Price: 12.99 },
    { Category: 'fiction', Author: 'Herman Melville', Title: 'Moby Dick', Price: 8.99 },
  ],
  Bicycle: [
    { Color: 'red', Price: 19.95, IsNew: true },
    { Color: 'green', Price: 20.01, IsNew: false },
  ],
  Labels: { engieer: 10, 'web/html': 15, 'k8s-app': 20 },
  Employees: { jason: 'manager', dan: 'clerk' },
};

const nodes = {
  kind: 'List',
  items: [
    {
      kind: 'None',
      metadata: { name: '127.0.0.1', labels: { 'kubernetes.io/hostname': '127.0.0.1' } },
      status: { capacity: { cpu: '4' }, ready: true, addresses: [{ type: 'LegacyHostIP', address: '127.0.0.1' }] },
    },
    {
      kind: 'None',
      metadata: { name: '127.0.0.2', labels: { 'kubernetes.io/hostname': '127.0.0.2' } },
      status: {
        capacity: { cpu: '8' },
        ready: false,
        addresses: [
          { type: 'LegacyHostIP', address: '127.0.0.2' },
          { type: 'another', address: '127.0.0.3' },
        ],
      },
    },
  ],
  users: [
    { name: 'myself', user: {} },
    { name: 'e2e', user: { username: 'admin', password: 'secret' } },
  ],
};

const containers = (n: number) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  spec: { containers: Array.from({ length: n }, (_, i) => ({ image: 'radial/busyboxplus:curl', name: `fake${i}` })) },
});

describe('fields, indexes, slices (client-go TestTypesInput)', () => {
  it.each([
    ['{ .bools }', '[true,false,true,false]'],
    ['{ .bools[0] }', 'true'],
    ['{ .bools[-1] }', 'false'],
    ['{ .bools[0:2] }', 'true false'],
    ['{ .bools[:2] }', 'true false'],
    ['{ .bools[:4:2] }', 'true true'],
    ['{ .integers }', '[1,2,3,4]'],
    ['{ .integers[-2] }', '3'],
    ['{ .integers[:4:2] }', '1 3'],
    ['{ .floats }', '[1,2.2,3.3,4]'],
    ['{ .floats[-2] }', '3.3'],
    ['{ .floats[:4:2] }', '1 3.3'],
    ['{ .strings }', '["one","two","three","four"]'],
    ['{ .strings[-2] }', 'three'],
    ['{ .strings[:4:2] }', 'one three'],
    ['{ .interfaces }', '[true,"one",1,1.1]'],
    ['{ .interfaces[0:2] }', 'true one'],
    ['{ .interfaces[:4:2] }', 'true 1'],
    ['{ .maps[0] }', '{"name":"one","value":1}'],
    ['{ .maps[-2] }', '{"name":"three","value":3.03}'],
    ['{ .maps[::2] }', '{"name":"one","value":1} {"name":"three","value":3.03}'],
    ['{ .maps[1::2] }', '{"name":"two","value":2.02} {"name":"four","value":4.04}'],
    ['{ .maps[*].name }', 'one two three four'],
    ['{ .maps[] }', '{"name":"one","value":1}'],
  ])('%s', (template, want) => expect(run(template, types)).toBe(want));
});

describe('the store (client-go TestStructInput, as JSON)', () => {
  it.each([
    ['hello jsonpath', null, 'hello jsonpath'],
    ['{..}', [1, 2, 3], '[1,2,3]'],
    ['{[?(@<5)]}', [2, 6, 3, 7], '2 3'],
    ['{"{"}', null, '{'],
    ['{[1,3,4]}', [0, 1, 2, 3, 4], '1 3 4'],
    ['{[0:2]}', ['Monday', 'Tudesday'], 'Monday Tudesday'],
    ['hello {.Name}', store, 'hello jsonpath'],
    ['{$.Labels.web/html}', store, '15'],
    ['{$.Employees.jason}', store, 'manager'],
    ['{.Labels.k8s-app}', store, '20'],
    ['{.Bicycle[*].Color}', store, 'red green'],
    ['{.Book[*].Author}', store, 'Nigel Rees Evelyn Waugh Herman Melville'],
    // A map's fields in Go's sorted key order (upstream's struct keeps declaration order).
    ['{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}', store, '{red true 19.95} {green false 20.01} '],
    ['{..Price}', store, '19.95 20.01 8.95 12.99 8.99'],
    ['{...Price}', store, '19.95 20.01 8.95 12.99 8.99'],
    ['{.Bicycle}', store, '[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]'],
    ['{range .Bicycle[*]}{ @ }{ " " }{end}', store, '{"Color":"red","IsNew":true,"Price":19.95} {"Color":"green","IsNew":false,"Price":20.01} '],
    ['{.Book[-1:]}', store, '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}'],
    ['{..Book[2]}', store, '{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}'],
    ['{.Bicycle[?(@.IsNew==true)]}', store, '{"Color":"red","IsNew":true,"Price":19.95}'],
  ])('%s', (template, data, want) => expect(run(template, data)).toBe(want));

  it('missing keys: an error, or nothing when allowed', () => {
    expect(evalError('{.hello}', store)).toBe('hello is not found');
    expect(run('{.hello}', store, true)).toBe('');
    expect(run('before-{.hello}after', store, true)).toBe('before-after');
  });

  it.each([
    ['{hello}', 'unrecognized identifier hello'],
    ['{.Labels[0]}', 'map[string]interface {} is not array or slice'],
    ['{.Book[?(@.Price<>10)]}', 'unrecognized filter operator <>'],
    ['{range .Labels.*}{@}{end}{end}', 'not in range, nothing to end'],
    ['{.Name[0]}', 'string is not array or slice'],
    ['{.Labels[?(@.x)]}', 'map[engieer:10 k8s-app:20 web/html:15] is not array or slice and cannot be filtered'],
  ])('%s fails: %s', (template, message) => expect(evalError(template, store)).toBe(message));
});

describe('JSON input (client-go TestJSONInput, TestKubernetes)', () => {
  const points = [
    { id: 'i1', x: 4, y: -5 },
    { id: 'i2', x: -2, y: -5, z: 1 },
    { id: 'i3', x: 8, y: 3 },
    { id: 'i4', x: -6, y: -1 },
    { id: 'i5', x: 0, y: 2, z: 1 },
    { id: 'i6', x: 1, y: 4 },
    { id: 'i7', x: null, y: 4 },
  ];
  it.each([
    ['{[?(@.z)].id}', 'i2 i5'],
    ["{[0]['id']}", 'i1'],
    ["{[-1]['x']}", 'null'],
    // A null value exists.
    ['{[?(@.x)].id}', 'i1 i2 i3 i4 i5 i6 i7'],
  ])('%s', (template, want) => expect(run(template, points)).toBe(want));

  it.each([
    ['{range .items[*]}{.metadata.name}, {end}{.kind}', '127.0.0.1, 127.0.0.2, List'],
    ['{range .items[*]}{.metadata.name}{"\\t"}{end}', '127.0.0.1\t127.0.0.2\t'],
    ['{.items[*].status.addresses[*].address}', '127.0.0.1 127.0.0.2 127.0.0.3'],
    ['{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}', '127.0.0.1, 127.0.0.2, 127.0.0.3, '],
    ['{.items[*].metadata.name}', '127.0.0.1 127.0.0.2'],
    ["{.items[*]['metadata.name', 'status.capacity']}", '127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}'],
    ['{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}', '[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] '],
    ['{.users[?(@.name=="e2e")].user.password}', 'secret'],
    ['{.items[0].metadata.labels.kubernetes\\.io/hostname}', '127.0.0.1'],
    ['{.items[?(@.metadata.labels.kubernetes\\.io/hostname=="127.0.0.1")].kind}', 'None'],
    ['{.items[?(@..ready==true)].metadata.name}', '127.0.0.1'],
    ['{..name}', '127.0.0.1 127.0.0.2 myself e2e'],
  ])('%s', (template, want) => expect(run(template, nodes)).toBe(want));
});

describe('ranges (client-go TestEmptyRange, TestNestedRanges, TestRunningPodsJSONPathOutput)', () => {
  const pods = {
    items: [
      {
        metadata: { name: 'pod1' },
        spec: {
          containers: [
            { name: 'foo', another: [{ name: 'value1' }, { name: 'value2' }] },
            { name: 'bar', another: [{ name: 'value1' }, { name: 'value2' }] },
          ],
        },
      },
      { metadata: { name: 'pod2' }, spec: { containers: [{ name: 'baz', another: [{ name: 'value1' }, { name: 'value2' }] }] } },
    ],
  };
  it('an empty range', () => {
    expect(run('{range .items[*]}{.metadata.name}{end}', { items: [] }, true)).toBe('');
    expect(run('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', { items: [] }, true)).toBe('');
  });
  it('nested ranges', () => {
    expect(run('{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}', pods)).toBe('pod1:foo,bar,+pod2:baz,+');
    expect(
      run('{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}', pods),
    ).toBe('pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#');
    expect(
      run(
        '{range .items[*]}{.metadata.name}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\\n"}{end}',
        pods,
      ),
    ).toBe('pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n');
  });
  it('a range is repeated afresh on every evaluation', () => {
    const path = parseJsonPathTemplate('{range .items[*]}{.metadata.name},{end}');
    expect(path.execute(pods)).toBe('pod1,pod2,');
    expect(path.execute(pods)).toBe('pod1,pod2,');
  });
  it('a filter over items some of which lack the field', () => {
    const list = {
      kind: 'List',
      items: [
        { kind: 'Pod', metadata: { name: 'pod1', annotations: { color: 'blue' } } },
        { kind: 'Pod', metadata: { name: 'pod2' } },
        { kind: 'Pod', metadata: { name: 'pod3', annotations: { color: 'green' } } },
        { kind: 'Pod', metadata: { name: 'pod4', annotations: { color: 'blue' } } },
      ],
    };
    const template = '{.items[?(@.metadata.annotations.color=="blue")].metadata.name}';
    expect(run(template, list, true)).toBe('pod1 pod4');
    expect(evalError(template, list)).toBe('annotations is not found');
    const running = {
      kind: 'List',
      items: [...[1, 2, 3].map((i) => ({ kind: 'Pod', metadata: { name: `pod${i}` }, status: { phase: 'Running' } })), { resourceVersion: '' }],
    };
    expect(run('{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\\n"}{end}', running, true)).toBe(
      'pod1 is Running\npod2 is Running\npod3 is Running\n',
    );
  });
});

describe('indexes and slices at the edges (client-go TestNegativeIndex, TestStep)', () => {
  const four = containers(4);
  it.each([
    ['{.spec.containers[0].name}', 'fake0'],
    ['{.spec.containers[0:0].name}', ''],
    ['{.spec.containers[0:-1].name}', 'fake0 fake1 fake2'],
    ['{.spec.containers[-1].name}', 'fake3'],
    ['{.spec.containers[-1:].name}', 'fake3'],
    ['{.spec.containers[-2:].name}', 'fake2 fake3'],
    ['{.spec.containers[-4].name}', 'fake0'],
    ['{.spec.containers[-4:].name}', 'fake0 fake1 fake2 fake3'],
    ['{.spec.containers[5:5].name}', ''],
    ['{.spec.containers[-5:-5].name}', ''],
    ['{.spec.containers[*].name}', 'fake0 fake1 fake2 fake3'],
  ])('%s', (template, want) => expect(run(template, four)).toBe(want));

  it.each([
    ['{.spec.containers[-1:0].name}', 'starting index 3 is greater than ending index 0'],
    ['{.spec.containers[-5].name}', 'array index out of bounds: index -1, length 4'],
    ['{.spec.containers[4].name}', 'array index out of bounds: index 4, length 4'],
    ['{.spec.containers[0:5].name}', 'array index out of bounds: index 4, length 4'],
    ['{.spec.containers[3:1].name}', 'starting index 3 is greater than ending index 1'],
    ['{.spec.containers[-1:-2].name}', 'starting index 3 is greater than ending index 2'],
  ])('%s fails: %s', (template, message) => expect(evalError(template, four)).toBe(message));

  it('[0] and [-1] of an empty list are out of bounds, missing keys allowed or not', () => {
    expect(evalError('{.spec.containers[0]}', containers(0), true)).toBe('array index out of bounds: index 0, length 0');
    expect(evalError('{.spec.containers[-1]}', containers(0), true)).toBe('array index out of bounds: index -1, length 0');
    expect(run('{.spec.containers[*]}', containers(0))).toBe('');
  });

  const six = containers(6);
  it.each([
    ['{.spec.containers[0:].name}', 'fake0 fake1 fake2 fake3 fake4 fake5'],
    ['{.spec.containers[0:6:].name}', 'fake0 fake1 fake2 fake3 fake4 fake5'],
    ['{.spec.containers[0:6:1].name}', 'fake0 fake1 fake2 fake3 fake4 fake5'],
    ['{.spec.containers[1:4:2].name}', 'fake1 fake3'],
    ['{.spec.containers[1:4:3].name}', 'fake1'],
    ['{.spec.containers[1:4:4].name}', 'fake1'],
    ['{.spec.containers[0:6:2].name}', 'fake0 fake2 fake4'],
    ['{.spec.containers[0:6:5].name}', 'fake0 fake5'],
    ['{.spec.containers[0:6:6].name}', 'fake0'],
  ])('%s', (template, want) => expect(run(template, six)).toBe(want));

  it('a step of zero or less fails', () => {
    expect(evalError('{.spec.containers[0:6:0].name}', six)).toBe('step must be > 0');
    expect(evalError('{.spec.containers[0:6:-1].name}', six)).toBe('step must be > 0');
  });
});

describe('quoting, unions, wildcards, recursive descent', () => {
  const obj = { a: { b: 1, 'b.c': 2 }, 'a.b': 3, list: ['x', 'y', 'z'], s: 'hé' };
  it("['a.b'] is the path .a.b; a dot in a key takes a backslash", () => {
    expect(parseJsonPath("['a.b']").findResults(obj)).toEqual([[1]]);
    expect(parseJsonPath("['a\\.b']").findResults(obj)).toEqual([[3]]);
    expect(parseJsonPath('.a\\.b').findResults(obj)).toEqual([[3]]);
    expect(parseJsonPath('.a.b\\.c').findResults(obj)).toEqual([[2]]);
  });
  it('unions of indexes and of keys', () => {
    expect(parseJsonPath('.list[0,2]').findResults(obj)).toEqual([['x', 'z']]);
    expect(parseJsonPath('.list[2, 0:2]').findResults(obj)).toEqual([['z', 'x', 'y']]);
    expect(parseJsonPath(".a['b', 'b\\.c']").findResults(obj)).toEqual([[1, 2]]);
  });
  it('.* gives a map values by sorted key, a list its elements, a string its UTF-8 bytes', () => {
    expect(parseJsonPath('.a.*').findResults(obj)).toEqual([[1, 2]]);
    expect(parseJsonPath('.list.*').findResults(obj)).toEqual([['x', 'y', 'z']]);
    expect(parseJsonPath('.s.*').findResults(obj)).toEqual([[0x68, 0xc3, 0xa9]]);
  });
  it('.. gives every value with something below it, itself first', () => {
    const root = parseJsonPath('..').findResults({ b: { c: 1, d: [] }, a: 'x', e: '' });
    expect(root).toEqual([[{ b: { c: 1, d: [] }, a: 'x', e: '' }, 'x', { c: 1, d: [] }]]);
    expect(parseJsonPath('..c').findResults({ c: 1, x: { c: 2, y: [{ c: 3 }] } })).toEqual([[1, 2, 3]]);
  });
  it('literals: text, integers, floats, booleans', () => {
    expect(run('{"a\\u00e9\\x41\\101"}', null)).toBe('aéAA');
    expect(run("{'it\\'s'}", null)).toBe("it's");
    expect(run("{'a'}{'b'}", null)).toBe('ab');
    expect(run('{3}{" "}{-2}{" "}{1.5}{" "}{true}', {})).toBe('3 -2 1.5 true');
    expect(run('{1000000.0} {0.00001}', {})).toBe('1e+06 1e-05');
  });
});

describe('filters compare as Go does', () => {
  const items = {
    items: [
      { name: 'a', n: 1, f: 0.5, ok: true, type: 'Ready' },
      { name: 'b', n: 2, f: 1.5, ok: false, type: 'Progressing' },
      { name: 'c', n: 3, f: 2.5, ok: true, type: 'Ready' },
    ],
  };
  it.each([
    ['{.items[?(@.type=="Ready")].name}', 'a c'],
    ["{.items[?(@.type!='Ready')].name}", 'b'],
    ['{.items[?(@.n<2)].name}', 'a'],
    ['{.items[?(@.n<=2)].name}', 'a b'],
    ['{.items[?(@.n>2)].name}', 'c'],
    ['{.items[?(@.n>=2)].name}', 'b c'],
    ['{.items[?(@.n == 2)].name}', 'b'],
    ['{.items[?(@.f>1.0)].name}', 'b c'],
    ['{.items[?(@.ok==false)].name}', 'b'],
    ['{.items[?(@.type<"Rf")].name}', 'a b c'],
    ['{.items[?(@.type>"Q")].name}', 'a c'],
    ['{.items[?(@.missing=="x")].name}', ''],
    ['{.items[?(@.name)].n}', '1 2 3'],
    ['{.items[?(@.nothing)].n}', ''],
  ])('%s', (template, want) => expect(run(template, items, true)).toBe(want));

  it.each([
    // An integer and a float never compare, even when equal.
    ['{.items[?(@.f==1)].name}', 'incompatible types for comparison'],
    ['{.items[?(@.n==1.0)].name}', 'incompatible types for comparison'],
    ['{.items[?(@.n=="1")].name}', 'incompatible types for comparison'],
    ['{.items[?(@.ok<true)].name}', 'invalid type for comparison'],
    ['{.items[?(@==1)].name}', 'invalid type for comparison'],
    ['{.items[?(@.*=="a")].name}', 'can only compare one element at a time'],
  ])('%s fails: %s', (template, message) => expect(evalError(template, items, true)).toBe(message));

  it('a null field is an invalid type to compare, and present to the existence test', () => {
    const withNull = { items: [{ x: null, name: 'a' }] };
    expect(evalError('{.items[?(@.x=="a")].name}', withNull)).toBe('invalid type for comparison');
    expect(run('{.items[?(@.x)].name}', withNull)).toBe('a');
    expect(evalError('{.items[0].x[?(@.y)]}', withNull)).toBe('<nil> is not array or slice and cannot be filtered');
  });
});

describe('parse errors, with upstream messages', () => {
  it.each([
    ['{.hello', 'unclosed action'],
    ['{.hello\n}', 'unclosed action'],
    ['{*}', "unrecognized character in action: U+002A '*'"],
    ['{\t}', 'unrecognized character in action: U+0009'],
    ['{\\\\\\}', "unrecognized character in action: U+005C '\\'"],
    ['{+12.3.0}', 'cannot parse number +12.3.0'],
    ['{-}', 'cannot parse number -'],
    ['{[1}', 'unterminated array'],
    ['{[?(.price]}', 'unterminated filter'],
    ['{[?(@.x=="a")}', 'unclosed array expect ]'],
    ['{........}', 'invalid multiple recursive descent'],
    ['{..*}', "unrecognized character in action: U+002A '*'"],
    ['{[abc]}', 'invalid array index abc'],
    ['{["a"]}', 'invalid array index "a"'],
    ['{[1:-]}', 'array index - is not a number'],
    ['{[99999999999999999999]}', 'array index 99999999999999999999 is not a number'],
    ['{[0,x]}', 'invalid array index x'],
    ['{"abc}', 'unterminated quoted string'],
    ['{"\\q"}', 'unquote string "\\q" error invalid syntax'],
    ["{'\\\"'}", "unquote string '\\\"' error invalid syntax"],
  ])('%j: %s', (template, message) => expect(parseError(template)).toBe(message));

  it('a jsonPath is wrapped in braces as the apiserver does, so a braced one fails', () => {
    expect(() => parseJsonPath('{.spec.x}')).toThrow("unrecognized character in action: U+007B '{'");
    expect(parseJsonPath('.spec.x').template).toBe('{.spec.x}');
    expect(() => parseJsonPath('.spec[')).toThrow('unterminated array');
  });

  it('parses what evaluation then refuses', () => {
    expect(parseError('{hello}')).toBe('nil');
    expect(parseError('{.a[?(@.x<>1)]}')).toBe('nil');
    expect(parseError('{}')).toBe('nil');
  });
});

describe('FindResults', () => {
  const obj = { spec: { replicas: 3, nothing: null, list: [{ v: 1 }, { v: 2 }] } };
  it('one list per top-level node', () => {
    expect(parseJsonPath('.spec.replicas').findResults(obj)).toEqual([[3]]);
    expect(parseJsonPathTemplate('{.spec.replicas} of {.spec.list[*].v}').findResults(obj)).toEqual([[3], [' of '], [1, 2]]);
    expect(parseJsonPath('.spec.nothing').findResults(obj)).toEqual([[null]]);
  });
  it('missing keys: an error by default, an empty list when allowed', () => {
    expect(() => parseJsonPath('.spec.replicaz').findResults(obj)).toThrow('replicaz is not found');
    expect(() => parseJsonPath('.spec.nothing.x').findResults(obj)).toThrow('x is not found');
    expect(parseJsonPath('.spec.replicaz', { allowMissingKeys: true }).findResults(obj)).toEqual([[]]);
    expect(parseJsonPath('.status.x.y', { allowMissingKeys: true }).findResults(obj)).toEqual([[]]);
    expect(parseJsonPath('.spec.list[*].w', { allowMissingKeys: true }).findResults(obj)).toEqual([[]]);
    expect(parseJsonPath('.spec.list[*].w', { allowMissingKeys: false }).findResults.bind(null, obj)).toThrow('w is not found');
  });
  it('firstResult: the first value of the first list, undefined for none or an error', () => {
    expect(parseJsonPath('.spec.list[*].v').firstResult(obj)).toBe(1);
    expect(parseJsonPath('.spec.nothing').firstResult(obj)).toBeNull();
    expect(parseJsonPath('.spec.missing', { allowMissingKeys: true }).firstResult(obj)).toBeUndefined();
    expect(parseJsonPath('.spec.list[5]', { allowMissingKeys: true }).firstResult(obj)).toBeUndefined();
  });
  it('prints maps and slices as Go JSON (sorted keys, HTML-safe), floats as fmt does', () => {
    const data = { m: { z: 1, a: '<b>&' }, f: 1234567.5, g: 0.00001, h: 0.5, big: 1e21 };
    expect(parseJsonPath('.m').execute(data)).toBe('{"a":"\\u003cb\\u003e\\u0026","z":1}');
    expect(parseJsonPathTemplate('{.f} {.g} {.h} {.big}').execute(data)).toBe('1.2345675e+06 1e-05 0.5 1e+21');
  });
});

describe("kubectl's RelaxedJSONPathExpression", () => {
  it.each([
    ['metadata.name', '{.metadata.name}'],
    ['.metadata.name', '{.metadata.name}'],
    ['{metadata.name}', '{.metadata.name}'],
    ['{.metadata.name}', '{.metadata.name}'],
    ['', ''],
  ])('%s is %s', (expression, want) => expect(relaxedJsonPathExpression(expression)).toBe(want));
  it('refuses nested braces', () => {
    expect(() => relaxedJsonPathExpression('{.a}{.b}')).toThrow(
      "unexpected path string, expected a 'name1.name2' or '.name1.name2' or '{name1.name2}' or '{.name1.name2}'",
    );
  });
});

describe('selectable fields (customResourceStrategy.selectableFields)', () => {
  const obj = { spec: { color: 'blue', size: 3, enabled: true, ratio: 1.5, none: null, tags: ['a', 'b'], m: { k: 'v' } } };
  it('names drop the leading dot; values print as fmt.Sprint', () => {
    expect(selectableField('.spec.color').name).toBe('spec.color');
    expect(selectableField('.spec.color').value(obj)).toBe('blue');
    expect(selectableField('.spec.size').value(obj)).toBe('3');
    expect(selectableField('.spec.enabled').value(obj)).toBe('true');
    expect(selectableField('.spec.ratio').value(obj)).toBe('1.5');
    expect(selectableField('.spec.m').value(obj)).toBe('map[k:v]');
    expect(selectableField('.spec.tags[0]').value(obj)).toBe('a');
  });
  it('missing and null are empty', () => {
    expect(selectableField('.spec.missing').value(obj)).toBe('');
    expect(selectableField('.status.phase').value(obj)).toBe('');
    expect(selectableField('.spec.none').value(obj)).toBe('');
  });
  it("upstream's errors", () => {
    expect(() => selectableField('.spec.tags[*]').value(obj)).toThrow('unexpectedly received more than one JSON path result');
    expect(() => selectableField('.spec[').value(obj)).toThrow('unexpected error parsing jsonPath: unterminated array');
    expect(() => selectableField('.spec.tags[5]').value(obj)).toThrow(
      'unexpected error finding value with jsonPath: array index out of bounds: index 5, length 2',
    );
  });
  it('selectableFieldValue parses a path once and reuses it', () => {
    expect(selectableFieldValue(obj, '.spec.color')).toBe('blue');
    expect(selectableFieldValue({ spec: { color: 'red' } }, '.spec.color')).toBe('red');
    expect(selectableFieldValue({}, '.spec.color')).toBe('');
  });
});
