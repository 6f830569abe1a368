/**
 * Upstream's fixtures fill every field of every type they contain. Walking them with the schema
 * proves both directions: no schema field is missing from the fixture (no invented or misnamed
 * field), and no fixture key is missing from the schema (nothing an upstream client sends is
 * lost).
 */
import { schemaRegistry, type SchemaType, type ValueType } from '../../src/schema';
import { createNaming } from '../../src/naming';
import { fixtureRows } from '../codecs/wire-fixtures';

const registry = schemaRegistry(createNaming('kubernetes'));

function problems(value: Record<string, unknown>, type: SchemaType, path: string, out: string[], seen: Set<string>): void {
  seen.add(type.name);
  const keys = new Set(Object.keys(value));
  if (type.typeMeta) {
    keys.delete('kind');
    keys.delete('apiVersion');
  }
  for (const property of type.properties) {
    if (!keys.delete(property.name)) out.push(`${path}.${property.name}: in the schema, not in the fixture`);
    else walk(value[property.name], property.field.type, `${path}.${property.name}`, out, seen);
  }
  for (const key of keys) out.push(`${path}.${key}: in the fixture, not in the schema (${type.name})`);
}

function walk(value: unknown, type: ValueType, path: string, out: string[], seen: Set<string>): void {
  if (value == null) return;
  if (type.kind === 'message') problems(value as Record<string, unknown>, registry.type(type.type), path, out, seen);
  else if (type.kind === 'list') (value as unknown[]).forEach((v, i) => walk(v, type.item, `${path}[${i}]`, out, seen));
  else if (type.kind === 'map') for (const [k, v] of Object.entries(value as object)) walk(v, type.value, `${path}[${k}]`, out, seen);
}

describe('schema against the fixtures', () => {
  const seen = new Set<string>();

  it.each(fixtureRows())('%s: the schema has exactly the fixture fields', (_name, fixture) => {
    const object = JSON.parse(fixture.json.toString('utf8'));
    const served = registry.kind(object.apiVersion, object.kind);
    expect(served).toBeDefined();
    const out: string[] = [];
    problems(object, served!.type, served!.kind, out, seen);
    expect(out).toEqual([]);
  });

  it('reaches the whole pod template (every type PodSpec uses)', () => {
    const reachable = new Set<string>();
    const visit = (name: string) => {
      if (reachable.has(name)) return;
      reachable.add(name);
      for (const field of registry.type(name).fields) {
        let t: ValueType = field.type;
        while (t.kind === 'list' || t.kind === 'map') t = t.kind === 'list' ? t.item : t.value;
        if (t.kind === 'message') visit(t.type);
      }
    };
    visit('core.v1.PodTemplateSpec');
    // Inline structs never appear as objects of their own in JSON.
    const inlineOnly = new Set(['core.v1.VolumeSource', 'core.v1.EphemeralContainerCommon', 'core.v1.ProbeHandler']);
    expect([...reachable].filter((n) => !seen.has(n) && !inlineOnly.has(n))).toEqual([]);
    expect(reachable.size).toBeGreaterThan(100);
  });
});
