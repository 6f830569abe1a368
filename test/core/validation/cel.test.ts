/**
 * Compile checks of CEL expressions in cel-go's words: syntax errors, references to variables
 * the environment does not declare (comprehension and `cel.bind` variables are bound), and
 * literal results of the wrong type.
 */
import { celCompileError } from '../../../src/core/validation/cel';

const env = { variables: ['object', 'request'], returnTypes: ['bool'] };

describe('celCompileError', () => {
  it.each([
    'object.spec.replicas <= 5',
    "request.userInfo.username.startsWith('system:')",
    'object.spec.containers.all(c, c.image != "")',
    'object.items.exists(i, object.items.filter(j, j == i).size() > 1)',
    'cel.bind(n, object.spec.replicas, n > 1 && n < 10)',
    'optional.of(object.x).hasValue()',
    'type(object) == map',
    'has(object.spec) && int(object.spec.replicas) > 0',
  ])('accepts %s', (expression) => {
    expect(celCompileError(expression, env)).toBeUndefined();
  });

  it('reports undeclared references where cel-go does, with the source line and a caret', () => {
    expect(celCompileError('object.a &&\n  params.b', env)).toBe(
      "compilation failed: ERROR: <input>:2:3: undeclared reference to 'params' (in container '')\n |   params.b\n | ..^",
    );
    expect(celCompileError('[1].all(x, x > y) && z', env)).toBe(
      "compilation failed: ERROR: <input>:1:16: undeclared reference to 'y' (in container '')\n | [1].all(x, x > y) && z\n | ...............^\n" +
        "ERROR: <input>:1:22: undeclared reference to 'z' (in container '')\n | [1].all(x, x > y) && z\n | .....................^",
    );
    expect(celCompileError("authorizer.group('').check('get')", env)).toMatch(/undeclared reference to 'authorizer'/);
  });

  it('reports syntax errors as compilation failures at their position', () => {
    expect(celCompileError('object.a ==', env)).toMatch(/^compilation failed: ERROR: <input>:1:\d+: Syntax error: .*\n \| object\.a ==\n \| \.*\^$/);
  });

  it('checks the type of a literal result', () => {
    expect(celCompileError('"yes"', env)).toBe('must evaluate to bool');
    expect(celCompileError('1', { variables: [], returnTypes: ['string', 'null_type'] })).toBe('must evaluate to one of [string null_type]');
    expect(celCompileError('null', { variables: [], returnTypes: ['string', 'null_type'] })).toBeUndefined();
    expect(celCompileError('1', { variables: [] })).toBeUndefined();
  });
});
