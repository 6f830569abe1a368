/**
 * Upstream's wire fixtures: release 1.32's serialized objects (the `testdata/HEAD` compatibility
 * data of k8s.io/api v0.32.1, every field filled, `kubernetes` naming profile), one kind per base
 * name with `.json`, `.yaml` and `.pb` (the protobuf envelope). They live in the repository
 * (`test/fixtures/wire/`, its README says where they come from), so every clone runs every check.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';

export const WIRE_DIR = path.resolve(__dirname, '../fixtures/wire');

export interface WireFixture {
  /** `apps.v1.ReplicaSet` */
  name: string;
  json: Buffer;
  yaml: Buffer;
  pb: Buffer;
}

export function wireFixtures(): WireFixture[] {
  return fs
    .readdirSync(WIRE_DIR)
    .filter((f) => f.endsWith('.pb'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.pb'.length);
      const read = (ext: string) => fs.readFileSync(path.join(WIRE_DIR, `${name}.${ext}`));
      return { name, json: read('json'), yaml: read('yaml'), pb: read('pb') };
    });
}

/** YAML as upstream reads it: YAML 1.1, timestamps stay strings. */
export function parseFixtureYaml(bytes: Buffer): unknown {
  return YAML.parse(bytes.toString('utf8'), {
    version: '1.1',
    customTags: (tags) => tags.filter((t) => typeof t === 'string' || t.tag !== 'tag:yaml.org,2002:timestamp'),
  });
}

/** Fixture names as jest `each` rows. */
export function fixtureRows(): [string, WireFixture][] {
  return wireFixtures().map((f): [string, WireFixture] => [f.name, f]);
}
