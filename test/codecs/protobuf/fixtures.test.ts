/**
 * Every upstream wire fixture: the `.pb` decodes to the same object as the `.json` and the
 * `.yaml` (key order included), and that object — from any of the three — re-encodes to the
 * fixture's exact protobuf bytes (kubernetes naming profile).
 */
import { createProtobufCodec, decodeEnvelope } from '../../../src/codecs/protobuf';
import { createNaming } from '../../../src/naming';
import { fixtureRows, parseFixtureYaml } from '../wire-fixtures';

const codec = createProtobufCodec(createNaming('kubernetes'));

describe('upstream wire fixtures through the protobuf codec', () => {
  it('covers every fixture kind', () => {
    expect(fixtureRows().length).toBeGreaterThanOrEqual(21);
  });

  describe.each(fixtureRows())('%s', (_name, fixture) => {
    it('decodes the .pb to the object of the .json, keys in the same order', () => {
      const decoded = codec.decode(fixture.pb);
      const json = JSON.parse(fixture.json.toString('utf8'));
      expect(decoded).toEqual(json);
      expect(JSON.stringify(decoded)).toBe(JSON.stringify(json));
    });

    it('decodes the .pb to the object of the .yaml', () => {
      expect(codec.decode(fixture.pb)).toEqual(parseFixtureYaml(fixture.yaml));
    });

    it('re-encodes the decoded object to identical bytes', () => {
      expect(Buffer.compare(codec.encode(codec.decode(fixture.pb)), fixture.pb)).toBe(0);
    });

    it('encodes the parsed .json and the parsed .yaml to the identical bytes', () => {
      expect(codec.encode(JSON.parse(fixture.json.toString('utf8'))).equals(fixture.pb)).toBe(true);
      expect(codec.encode(parseFixtureYaml(fixture.yaml)).equals(fixture.pb)).toBe(true);
    });

    it('keeps proto2 presence in the envelope: contentEncoding and contentType written empty', () => {
      const envelope = decodeEnvelope(fixture.pb);
      expect(envelope.contentEncoding).toBe('');
      expect(envelope.contentType).toBe('');
      expect(fixture.pb.subarray(-4)).toEqual(Buffer.from([0x1a, 0x00, 0x22, 0x00]));
    });
  });
});
