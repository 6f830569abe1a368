import { createNaming } from '../../../src/naming';
import { parseDeleteOptions } from '../../../src/gateway/options';

const naming = createNaming('kubernetes');
const q = (s: string) => new URLSearchParams(s);

describe('DeleteOptions', () => {
  it('comes from the query when there is no body', () => {
    expect(parseDeleteOptions(undefined, q('gracePeriodSeconds=0&propagationPolicy=Foreground&dryRun=All'), naming)).toEqual({
      gracePeriodSeconds: 0,
      propagationPolicy: 'Foreground',
      dryRun: ['All'],
    });
  });

  it('comes from the body when there is one, ignoring the query (upstream)', () => {
    const body = {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Background',
      preconditions: { uid: 'u1', resourceVersion: '9' },
      orphanDependents: null,
    };
    expect(parseDeleteOptions(body, q('gracePeriodSeconds=5'), naming)).toEqual({
      propagationPolicy: 'Background',
      preconditions: { uid: 'u1', resourceVersion: '9' },
    });
  });

  it('answers 400 for malformed values', () => {
    expect(() => parseDeleteOptions(undefined, q('gracePeriodSeconds=soon'), naming)).toThrow(
      expect.objectContaining({ status: expect.objectContaining({ code: 400, message: 'strconv.ParseInt: parsing "soon": invalid syntax' }) }),
    );
    expect(() => parseDeleteOptions({ gracePeriodSeconds: '5' }, q(''), naming)).toThrow(
      expect.objectContaining({ code: 400, message: 'json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64' }),
    );
    expect(() => parseDeleteOptions([], q(''), naming)).toThrow(expect.objectContaining({ code: 400 }));
  });

  it('answers 422 DeleteOptions Invalid as upstream validates', () => {
    expect(() => parseDeleteOptions(undefined, q('propagationPolicy=Sideways'), naming)).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({
          code: 422,
          message:
            'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"',
        }),
      }),
    );
    expect(() => parseDeleteOptions({ orphanDependents: true, propagationPolicy: 'Orphan' }, q(''), naming)).toThrow(
      expect.objectContaining({
        message:
          'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
      }),
    );
    expect(() => parseDeleteOptions({ dryRun: ['Some'] }, q(''), naming)).toThrow(
      expect.objectContaining({ message: 'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All"' }),
    );
  });
});
