/** YAML as upstream writes it (go-yaml v2 via JSONToYAML): fixture bytes and go-yaml's key order. */
import { compareGoYamlKeys, encodeUpstreamYaml } from '../../src/codecs/yaml-order';
import { createProtobufCodec } from '../../src/codecs/protobuf';
import { createNaming } from '../../src/naming';
import { fixtureRows, parseFixtureYaml } from './wire-fixtures';

const protobuf = createProtobufCodec(createNaming('kubernetes'));

describe('YAML fixtures', () => {
  describe.each(fixtureRows())('%s', (_name, fixture) => {
    const expected = fixture.yaml.toString('utf8');

    it('encodes the parsed .yaml, the parsed .json and the decoded .pb to the fixture bytes', () => {
      expect(encodeUpstreamYaml(parseFixtureYaml(fixture.yaml))).toBe(expected);
      expect(encodeUpstreamYaml(JSON.parse(fixture.json.toString('utf8')))).toBe(expected);
      expect(encodeUpstreamYaml(protobuf.decode(fixture.pb))).toBe(expected);
    });
  });
});

describe("go-yaml v2's key order", () => {
  it('compares digit runs as numbers and puts non-letters before letters', () => {
    const keys = ['a10', 'a9', 'b', 'A', '_x', '1', '10', '2', 'a_b', 'a-b'];
    expect([...keys].sort(compareGoYamlKeys)).toEqual(['_x', '1', '2', '10', 'A', 'a-b', 'a_b', 'a9', 'a10', 'b']);
  });

  it('writes maps in that order, sequences unindented, YAML 1.1 booleans quoted', () => {
    expect(encodeUpstreamYaml({ b: ['x'], a10: 'on', a9: 'y' })).toBe('a9: "y"\na10: "on"\nb:\n- x\n');
  });
});
