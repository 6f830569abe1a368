import { createNaming } from '../../../src/naming';
import { parseWriteOptions } from '../../../src/gateway/options';

const naming = createNaming('kubernetes');
const q = (s: string) => new URLSearchParams(s);

describe('WRITE and PATCH parameters', () => {
  it('decodes dryRun, fieldManager, fieldValidation', () => {
    expect(parseWriteOptions(q('dryRun=All&fieldManager=me&fieldValidation=Strict'), naming, 'CreateOptions')).toEqual({
      dryRun: ['All'],
      fieldManager: 'me',
      fieldValidation: 'Strict',
    });
    expect(parseWriteOptions(q(''), naming, 'UpdateOptions')).toEqual({});
  });

  it('treats ?dryRun without a value as not set', () => {
    expect(parseWriteOptions(q('dryRun'), naming, 'CreateOptions')).toEqual({});
  });

  it('rejects unknown dryRun values with upstream 422', () => {
    expect(() => parseWriteOptions(q('dryRun=Foo'), naming, 'CreateOptions')).toThrow(
      expect.objectContaining({
        status: expect.objectContaining({
          code: 422,
          message: 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Foo"}: supported values: "All"',
        }),
      }),
    );
  });

  it('rejects unknown fieldValidation values with upstream 422', () => {
    expect(() => parseWriteOptions(q('fieldValidation=Loud'), naming, 'UpdateOptions')).toThrow(
      expect.objectContaining({
        message: 'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"',
      }),
    );
  });

  it('checks fieldManager length and printable characters', () => {
    expect(() => parseWriteOptions(q(`fieldManager=${'a'.repeat(129)}`), naming, 'CreateOptions')).toThrow(
      expect.objectContaining({ message: 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes' }),
    );
    expect(() => parseWriteOptions(q('fieldManager=a%07b'), naming, 'CreateOptions')).toThrow(
      expect.objectContaining({
        message: 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\u0007b": invalid character U+0007 (at position 1)',
      }),
    );
  });

  it('allows force only for apply, and requires fieldManager for apply', () => {
    expect(parseWriteOptions(q('force=true&fieldManager=kubectl'), naming, 'PatchOptions', 'apply')).toEqual({ fieldManager: 'kubectl', force: true });
    expect(() => parseWriteOptions(q('force=true'), naming, 'PatchOptions', 'merge')).toThrow(
      expect.objectContaining({ message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch' }),
    );
    expect(() => parseWriteOptions(q(''), naming, 'PatchOptions', 'apply')).toThrow(
      expect.objectContaining({ message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch' }),
    );
  });
});
