/**
 * The Table of custom resources from a CRD version's `additionalPrinterColumns`, as
 * apiextensions-apiserver's tableconvertor builds it (k8s 1.32): the Name column first, each
 * printer column's definition, each type's cell (upstream's Test_cellForJSONValue and
 * Test_convertor_ConvertToTable cases), the default Age column, priority and format, missing
 * fields, a column that does not parse, and the CronTab of the CRD documentation.
 */
import type { ApiList, ApiObject } from '../../../src/core/api';
import {
  OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION,
  OBJECT_META_NAME_DESCRIPTION,
  type PrinterColumn,
  buildTable,
  customResourceTable,
  printerColumnCell,
  printerColumnsForVersion,
  scalePrinterColumns,
} from '../../../src/core/table';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString().replace('.000Z', 'Z');
const HOUR = 3600_000;

const NAME_COLUMN = { name: 'Name', type: 'string', format: 'name', description: OBJECT_META_NAME_DESCRIPTION, priority: 0 };

const CRONTAB_COLUMNS: PrinterColumn[] = [
  { name: 'Spec', type: 'string', description: 'The cron spec defining the interval a CronJob is run', jsonPath: '.spec.cronSpec' },
  { name: 'Replicas', type: 'integer', description: 'The number of jobs launched by the CronJob', jsonPath: '.spec.replicas' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

const cronTab = (
  name: string,
  secondsAgo: number,
  spec: Record<string, unknown> = { cronSpec: '* * * * */5', image: 'my-awesome-cron-image', replicas: 1 },
) => ({
  apiVersion: 'stable.example.com/v1',
  kind: 'CronTab',
  metadata: { name, namespace: 'default', creationTimestamp: ago(secondsAgo * 1000), resourceVersion: '7', uid: 'u' },
  spec,
});

const row = (columns: PrinterColumn[] | undefined, obj: unknown) => customResourceTable(columns).row(obj as ApiObject, { now: NOW }).cells;

describe('the CronTab of the CRD documentation', () => {
  const def = customResourceTable(CRONTAB_COLUMNS);
  it('columns: Name first, then each printer column', () => {
    expect(def.columns).toEqual([
      NAME_COLUMN,
      { name: 'Spec', type: 'string', format: '', description: 'The cron spec defining the interval a CronJob is run', priority: 0 },
      { name: 'Replicas', type: 'integer', format: '', description: 'The number of jobs launched by the CronJob', priority: 0 },
      {
        name: 'Age',
        type: 'date',
        format: '',
        description: 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp',
        priority: 0,
      },
    ]);
    expect(def.error).toBeUndefined();
  });

  it('a row: name, spec, replicas, age', () => {
    expect(def.row(cronTab('my-new-cron-object', 7) as ApiObject, { now: NOW })).toEqual({ cells: ['my-new-cron-object', '* * * * */5', 1, '7s'] });
  });

  it('a list as metav1.Table, through buildTable', () => {
    const list: ApiList = {
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTabList',
      metadata: { resourceVersion: '9' },
      items: [cronTab('a', 90) as ApiObject, cronTab('b', 3 * 3600, { cronSpec: '0 * * * *' }) as ApiObject],
    };
    const table = buildTable(list, def, {
      metaApiVersion: 'meta.k8s.io/v1',
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      includeObject: 'None',
      ctx: { now: NOW },
    });
    expect(table.metadata).toEqual({ resourceVersion: '9' });
    expect(table.columnDefinitions!.map((c) => c.name)).toEqual(['Name', 'Spec', 'Replicas', 'Age']);
    expect(table.rows).toEqual([
      { cells: ['a', '* * * * */5', 1, '90s'], object: null },
      { cells: ['b', '0 * * * *', null, '3h'], object: null },
    ]);
    const empty = buildTable({ ...list, items: [] }, def, { metaApiVersion: 'meta.k8s.io/v1', apiVersion: 'v', kind: 'CronTab', ctx: { now: NOW } });
    expect(empty.rows).toEqual([]);
  });
});

describe('column definitions', () => {
  it('format, priority and description as given; the description defaults to the jsonPath', () => {
    const def = customResourceTable([
      { name: 'Host', type: 'string', format: 'hostname', priority: 1, description: 'Where', jsonPath: '.spec.host' },
      { name: 'Port', type: 'integer', format: 'int32', jsonPath: '.spec.port' },
    ]);
    expect(def.columns.slice(1)).toEqual([
      { name: 'Host', type: 'string', format: 'hostname', description: 'Where', priority: 1 },
      { name: 'Port', type: 'integer', format: 'int32', description: 'Custom resource definition column (in JSONPath format): .spec.port', priority: 0 },
    ]);
  });

  it('a version without columns is served Age (serveDefaultColumnsIfEmpty)', () => {
    const age = { name: 'Age', type: 'date', format: '', description: OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, priority: 0 };
    for (const columns of [undefined, null, []]) {
      const def = customResourceTable(columns);
      expect(def.columns).toEqual([NAME_COLUMN, age]);
      expect(def.row(cronTab('x', 3 * 86400 + 4 * 3600) as ApiObject, { now: NOW }).cells).toEqual(['x', '3d4h']);
    }
    expect(printerColumnsForVersion([])).toEqual([
      { name: 'Age', type: 'date', description: OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, jsonPath: '.metadata.creationTimestamp' },
    ]);
    expect(printerColumnsForVersion(CRONTAB_COLUMNS)).toBe(CRONTAB_COLUMNS);
  });

  it('the /scale table: Desired and Available when the paths are set, then Age', () => {
    expect(
      scalePrinterColumns({ specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' }).map((c) => [c.name, c.type, c.jsonPath]),
    ).toEqual([
      ['Desired', 'integer', '.spec.replicas'],
      ['Available', 'integer', '.status.replicas'],
      ['Age', 'date', '.metadata.creationTimestamp'],
    ]);
    expect(scalePrinterColumns({ specReplicasPath: '.spec.replicas', statusReplicasPath: '' }).map((c) => c.name)).toEqual(['Desired', 'Age']);
    expect(scalePrinterColumns(undefined).map((c) => c.name)).toEqual(['Age']);
    const scale = { kind: 'Scale', metadata: { name: 'c', creationTimestamp: ago(5000) }, spec: { replicas: 3 }, status: { replicas: 2 } };
    expect(row(scalePrinterColumns({ specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' }), scale)).toEqual(['c', 3, 2, '5s']);
  });

  it('a jsonPath that does not parse ends the columns there, as upstream serves them', () => {
    const def = customResourceTable([
      { name: 'A', type: 'string', jsonPath: '.spec.a' },
      { name: 'B', type: 'string', jsonPath: '{.spec.b}' },
      { name: 'C', type: 'string', jsonPath: '.spec.c' },
    ]);
    expect(def.error).toBe('unrecognized column definition "{.spec.b}"');
    expect(def.columns.map((c) => c.name)).toEqual(['Name', 'A']);
    expect(def.row({ metadata: { name: 'n' }, spec: { a: 'x', b: 'y' } }, { now: NOW }).cells).toEqual(['n', 'x']);
  });
});

describe("cells by type (upstream's Test_cellForJSONValue)", () => {
  it.each([
    ['integer', 42, 42],
    ['integer', 3.14, 3],
    ['integer', -3.9, -3],
    ['integer', true, null],
    ['integer', 'foo', null],
    ['number', 42, 42],
    ['number', 3.14, 3.14],
    ['number', true, null],
    ['number', 'foo', null],
    ['boolean', 42, null],
    ['boolean', 3.14, null],
    ['boolean', true, true],
    ['boolean', 'foo', null],
    ['string', 42, null],
    ['string', 3.14, null],
    ['string', true, null],
    ['string', 'foo', 'foo'],
    ['date', 42, null],
    ['date', 3.14, null],
    ['date', true, null],
    ['date', ago(12 * HOUR + 30 * 60_000), '12h'],
    ['date', ago(-(12 * HOUR + 30 * 60_000)), '<invalid>'],
    ['date', '', '<unknown>'],
    ['unknown', 'foo', null],
    ['integer', null, null],
    ['date', null, null],
  ])('%s of %j is %j', (type, value, want) => expect(printerColumnCell(type, value, NOW)).toEqual(want));

  it.each([
    ['null', '<unknown>'],
    ['0001-01-01T00:00:00Z', '<unknown>'],
    ['0001-01-01T01:00:00+01:00', '<unknown>'],
    ['yesterday', '<invalid>'],
    ['2026-01-01', '<invalid>'],
    ['2026-01-01t11:59:30z', '<invalid>'],
    ['2026-02-30T11:59:30Z', '<invalid>'],
    ['2026-01-01T24:00:00Z', '<invalid>'],
    ['2026-01-01T11:59:30Z', '30s'],
    ['2026-01-01T11:59:30.999999Z', '29s'],
    ['2026-01-01T11:59:30,5Z', '29s'],
    ['2026-01-01T12:59:30+01:00', '30s'],
    ['2026-01-01T9:00:00Z', '3h'],
    ['2026-01-01T12:00:00.5Z', '0s'],
    ['2026-01-01T12:00:02Z', '<invalid>'],
  ])('date %s is %s', (value, want) => expect(printerColumnCell('date', value, NOW)).toBe(want));
});

describe("string columns print any value (upstream's ConvertToTable cases)", () => {
  const columns = (type: string): PrinterColumn[] => [
    { name: 'valueOnly', type, jsonPath: '.spec.servers[0].hosts[0]' },
    { name: 'single1', type, jsonPath: '.spec.servers[0].hosts' },
    { name: 'single2', type, jsonPath: '.spec.servers[1].hosts' },
    { name: 'multi', type, jsonPath: '.spec.servers[*].hosts' },
  ];
  const strings = { metadata: { name: 'blah' }, spec: { servers: [{ hosts: ['foo'] }, { hosts: ['bar', 'baz'] }] } };
  const integers = { metadata: { name: 'blah' }, spec: { servers: [{ hosts: [1] }, { hosts: [2, 3] }] } };

  it('strings: a path matching several values shows the first', () => {
    expect(row(columns('string'), strings)).toEqual(['blah', 'foo', '["foo"]', '["bar","baz"]', '["foo"]']);
  });
  it('integers as strings', () => {
    expect(row(columns('string'), integers)).toEqual(['blah', '1', '[1]', '[2,3]', '[1]']);
  });
  it('integer columns take only numbers', () => {
    expect(row(columns('integer'), integers)).toEqual(['blah', 1, null, null, null]);
  });
  it('scalars, maps and null in a string column', () => {
    const cols: PrinterColumn[] = ['i', 'f', 'big', 'b', 'm', 'n', 'e'].map((k) => ({ name: k, type: 'string', jsonPath: `.spec.${k}` }));
    const obj = { metadata: { name: 'x' }, spec: { i: 42, f: 3.14, big: 2500000.5, b: false, m: { z: '<1>', a: [1] }, n: null, e: '' } };
    expect(row(cols, obj)).toEqual(['x', '42', '3.14', '2.5000005e+06', 'false', '{"a":[1],"z":"\\u003c1\\u003e"}', '<no value>', '']);
  });
});

describe('missing fields and failed evaluations are null cells', () => {
  const cols: PrinterColumn[] = [
    { name: 'S', type: 'string', jsonPath: '.status.phase' },
    { name: 'I', type: 'integer', jsonPath: '.status.count' },
    { name: 'N', type: 'number', jsonPath: '.spec.ratio' },
    { name: 'B', type: 'boolean', jsonPath: '.spec.enabled' },
    { name: 'D', type: 'date', jsonPath: '.status.lastRun' },
    { name: 'Out', type: 'string', jsonPath: '.spec.list[3]' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  ];
  it('nothing there', () => {
    expect(row(cols, { metadata: { name: 'x' }, spec: { list: [] } })).toEqual(['x', null, null, null, null, null, null, null]);
    expect(row(cols, {})).toEqual(['', null, null, null, null, null, null, null]);
    expect(row(cols, { metadata: { name: 7 }, spec: null, status: 'weird' })).toEqual(['', null, null, null, null, null, null, null]);
  });
  it('everything there', () => {
    const obj = {
      metadata: { name: 'x' },
      spec: { ratio: 0.25, enabled: true, list: [0, 1, 2, 'three'] },
      status: {
        phase: 'Running',
        count: 4,
        lastRun: ago(150_000),
        conditions: [
          { type: 'Progressing', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
      },
    };
    expect(row(cols, obj)).toEqual(['x', 'Running', 4, 0.25, true, '2m30s', 'three', 'True']);
  });
});

describe('cost', () => {
  it('columns are parsed once; a row of the CronTab table takes microseconds', () => {
    const def = customResourceTable([...CRONTAB_COLUMNS, { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' }]);
    const obj = { ...cronTab('c', 60), status: { conditions: [{ type: 'Ready', status: 'True' }] } } as ApiObject;
    const rows = 20_000;
    for (let i = 0; i < 2000; i++) def.row(obj, { now: NOW });
    const start = process.hrtime.bigint();
    for (let i = 0; i < rows; i++) def.row(obj, { now: NOW });
    const perRowUs = Number(process.hrtime.bigint() - start) / 1000 / rows;
    expect(perRowUs).toBeLessThan(50);
  });
});
