/**
 * `application/yaml` (docs/API.md, "Content negotiation" 2). Upstream converts between YAML and JSON
 * with YAML 1.1 rules (go-yaml v2 through the sigs yaml package): map keys in go-yaml's natural order,
 * sequences not indented under their key, no line wrapping, and strings that YAML 1.1 would
 * read as something else (`"yes"`, timestamps) quoted; timestamps stay strings on input.
 * YAML has no watch framing upstream.
 */
import YAML from 'yaml';
import { compareGoYamlKeys } from '../../codecs/yaml-order';
import { fastYaml } from '../../codecs/yaml-fast';
import { YAML_PARSE_OPTIONS, fastParseYaml } from '../../codecs/yaml-fast-parse';
import { type Codec, CodecError } from './codec';

export const YAML_MEDIA_TYPE = 'application/yaml';

const keyText = (key: unknown): string => String(YAML.isScalar(key) ? key.value : key);
const byGoYamlKey = (a: { key: unknown }, b: { key: unknown }) => compareGoYamlKeys(keyText(a.key), keyText(b.key));

export const yamlCodec: Codec = {
  mediaType: YAML_MEDIA_TYPE,
  encode(value) {
    // The objects the API serves take the fast path; anything it cannot write exactly goes to the library.
    const text = fastYaml(value) ?? YAML.stringify(value, { version: '1.1', sortMapEntries: byGoYamlKey, indentSeq: false, lineWidth: 0 });
    return Buffer.from(text, 'utf8');
  },
  decode(body) {
    const text = Buffer.from(body).toString('utf8');
    try {
      // Block-style bodies of one-line scalars take the fast path; the rest goes to the library.
      const fast = fastParseYaml(text);
      if (fast !== undefined) return fast;
      return YAML.parse(text, YAML_PARSE_OPTIONS) as unknown;
    } catch (err) {
      throw new CodecError(YAML_MEDIA_TYPE, (err as Error).message);
    }
  },
};
