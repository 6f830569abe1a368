import { parseRequestInfo, requestInfoStep } from '../../../src/gateway/steps/request-info';
import type { ResourceRequestInfo } from '../../../src/gateway/types';
import { fakeExchange } from '../support/http';

function info(method: string, url: string) {
  const [path, q = ''] = url.split('?');
  return parseRequestInfo({ method, path, query: new URLSearchParams(q) });
}

describe('request info (upstream RequestInfoFactory)', () => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['GET', '/api/v1/namespaces', { verb: 'list', apiGroup: '', apiVersion: 'v1', namespace: '', resource: 'namespaces', name: '' }],
    ['GET', '/api/v1/namespaces/other', { verb: 'get', namespace: 'other', resource: 'namespaces', name: 'other' }],
    ['GET', '/api/v1/namespaces/other/pods', { verb: 'list', namespace: 'other', resource: 'pods', name: '', namespaceScopedPath: true }],
    ['GET', '/api/v1/namespaces/other/pods/foo', { verb: 'get', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['HEAD', '/api/v1/namespaces/other/pods/foo', { verb: 'get', name: 'foo' }],
    ['GET', '/api/v1/pods', { verb: 'list', namespace: '', resource: 'pods' }],
    ['GET', '/api/v1/namespaces/other/pods/foo/status', { verb: 'get', resource: 'pods', name: 'foo', subresource: 'status' }],
    [
      'PUT',
      '/api/v1/namespaces/foo/status',
      { verb: 'update', namespace: 'foo', resource: 'namespaces', name: 'foo', subresource: 'status', namespaceScopedPath: false },
    ],
    ['PUT', '/api/v1/namespaces/foo/finalize', { verb: 'update', resource: 'namespaces', subresource: 'finalize' }],
    [
      'GET',
      '/apis/apps/v1/namespaces/ns/replicasets/rs/scale',
      { verb: 'get', apiGroup: 'apps', apiVersion: 'v1', resource: 'replicasets', subresource: 'scale' },
    ],
    ['POST', '/api/v1/namespaces/other/pods', { verb: 'create', resource: 'pods' }],
    ['PUT', '/api/v1/namespaces/other/pods/foo', { verb: 'update' }],
    ['PATCH', '/api/v1/namespaces/other/pods/foo', { verb: 'patch' }],
    ['DELETE', '/api/v1/namespaces/other/pods/foo', { verb: 'delete' }],
    ['DELETE', '/api/v1/namespaces/other/pods', { verb: 'deletecollection' }],
    ['GET', '/api/v1/pods?watch=true', { verb: 'watch' }],
    ['GET', '/api/v1/pods?watch=1', { verb: 'watch' }],
    ['GET', '/api/v1/pods?watch=false', { verb: 'list' }],
    ['GET', '/api/v1/pods?watch=0', { verb: 'list' }],
    ['GET', '/api/v1/watch/namespaces/other/pods', { verb: 'watch', namespace: 'other', resource: 'pods', watchPrefix: true }],
    ['GET', '/api/v1/namespaces/other/pods?fieldSelector=metadata.name%3Dfoo', { verb: 'list', name: 'foo' }],
    [
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin',
      { verb: 'get', apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'admin' },
    ],
    ['OPTIONS', '/api/v1/pods', { verb: '' }],
    // Leading and trailing slashes are trimmed (Go's strings.Trim), inner empty segments kept.
    ['GET', '///api/v1/namespaces/other/pods/foo//', { verb: 'get', namespace: 'other', resource: 'pods', name: 'foo' }],
    ['GET', '/api/v1/namespaces//pods', { verb: 'list', namespace: '', resource: 'pods', name: '', subresource: '' }],
  ];
  it.each(cases)('%s %s', (method, url, expected) => {
    const got = info(method, url);
    expect(got.isResourceRequest).toBe(true);
    expect(got).toMatchObject(expected);
  });

  it.each([
    ['GET', '/api'],
    ['GET', '/api/v1'],
    ['GET', '/apis'],
    ['GET', '/apis/apps'],
    ['GET', '/apis/apps/v1'],
    ['GET', '/version'],
    ['POST', '/healthz'],
    ['GET', '/foo/bar/baz'],
    ['GET', '/api/v1/watch'],
    ['GET', '//'],
    ['GET', '/'],
  ])('%s %s is a non-resource request with the lower-case method as verb', (method, path) => {
    expect(info(method, path)).toEqual({ isResourceRequest: false, path, verb: method.toLowerCase() });
  });

  it('keeps the parts after the subresource for the router to reject', () => {
    expect((info('GET', '/api/v1/namespaces/a/pods/b/status/extra') as ResourceRequestInfo).parts).toEqual(['pods', 'b', 'status', 'extra']);
  });

  it('runs as a step and sets exchange.info before calling next', async () => {
    const { exchange } = fakeExchange({ url: '/api/v1/namespaces/x/configmaps' });
    let seen: unknown;
    await requestInfoStep(async (ex) => {
      seen = ex.info;
    })(exchange);
    expect(seen).toMatchObject({ resource: 'configmaps', namespace: 'x', verb: 'list' });
  });
});
