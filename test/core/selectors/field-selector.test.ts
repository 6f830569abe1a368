/**
 * Field selectors: upstream's term syntax and escapes, and which fields each type can be
 * selected on (its definition's `selectableFields`), with upstream's 400 messages.
 */
import { parseFieldSelector, parseSelection, SelectorParseError, selectableFieldsOf } from '../../../src/core/selectors';
import { builtinResources } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { StatusError } from '../../../src/status';

const defs = builtinResources(createNaming('kubernetes'));
const def = (resource: string) => defs.find((d) => d.resource === resource)!;

const errorOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof StatusError) {
      expect(err.code).toBe(400);
      return err.status.message!;
    }
    expect(err).toBeInstanceOf(SelectorParseError);
    return (err as Error).message;
  }
  throw new Error('expected a rejection');
};

describe('field selectors', () => {
  it('parses =, == and != terms with escaped values', () => {
    const sel = parseFieldSelector('metadata.namespace!=kube-system,metadata.name==a\\,b\\=c\\\\');
    expect(sel.requirements).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a,b=c\\' },
      { field: 'metadata.namespace', operator: '!=', value: 'kube-system' },
    ]);
    expect(sel.matches({ 'metadata.name': 'a,b=c\\', 'metadata.namespace': 'default' })).toBe(true);
    expect(sel.matches({ 'metadata.name': 'a,b=c\\', 'metadata.namespace': 'kube-system' })).toBe(false);
    expect(sel.toString()).toBe('metadata.name=a\\,b\\=c\\\\,metadata.namespace!=kube-system');
    expect(parseFieldSelector('a=').matches({})).toBe(true);
    expect(parseFieldSelector(',,').empty).toBe(true);
  });

  it("rejects malformed terms with upstream's messages", () => {
    expect(errorOf(() => parseFieldSelector('foo'))).toBe("invalid selector: 'foo'; can't understand 'foo'");
    expect(errorOf(() => parseFieldSelector('a=b=c'))).toBe('invalid field selector: unescaped character in value: =');
    expect(errorOf(() => parseFieldSelector('a=b\\x'))).toBe('invalid field selector: invalid escape sequence: \\x');
    expect(errorOf(() => parseFieldSelector('a=b\\'))).toBe('invalid field selector: invalid escape sequence: \\');
  });

  it('checks fields against the type: its own fields, plus metadata.name and metadata.namespace', () => {
    expect(parseSelection(def('pods'), '', 'spec.nodeName=n1,status.phase!=Running').empty).toBe(false);
    expect(parseSelection(def('replicasets'), undefined, 'status.replicas=0').field.requirements).toHaveLength(1);
    expect(errorOf(() => parseSelection(def('pods'), '', 'spec.bogus=x'))).toBe('field label not supported: spec.bogus');
    expect(errorOf(() => parseSelection(def('configmaps'), '', 'data.x=1'))).toBe(
      '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    expect(errorOf(() => parseSelection(def('configmaps'), 'a in (', ''))).toBe("unable to parse requirement: found '', expected: ',', ')' or identifier");
  });

  it('matches objects through their field view', () => {
    const pods = def('pods');
    const pod = { metadata: { name: 'p', namespace: 'ns', labels: { app: 'web' } }, spec: { nodeName: 'n1' }, status: { phase: 'Running' } };
    const fields = selectableFieldsOf(pods, pod);
    expect(fields).toMatchObject({ 'metadata.name': 'p', 'metadata.namespace': 'ns', 'spec.nodeName': 'n1', 'status.phase': 'Running' });
    expect(parseSelection(pods, 'app=web', 'spec.nodeName=n1').matches(pod.metadata.labels, fields)).toBe(true);
    expect(parseSelection(pods, 'app=db', 'spec.nodeName=n1').matches(pod.metadata.labels, fields)).toBe(false);
    expect(parseSelection(pods, '', 'status.phase!=Running').matches(pod.metadata.labels, fields)).toBe(false);
  });
});
