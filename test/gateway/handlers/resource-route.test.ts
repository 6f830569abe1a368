import { createNaming } from '../../../src/naming';
import { resolveResourceRoute } from '../../../src/gateway/handlers/resource-route';
import { ResourceIndex } from '../../../src/gateway/resource-index';
import { parseRequestInfo } from '../../../src/gateway/steps/request-info';
import type { ResourceRequestInfo } from '../../../src/gateway/types';
import { testDefinitions } from '../support/definitions';

const naming = createNaming('kubernetes');
const index = new ResourceIndex(testDefinitions(naming));

function route(method: string, url: string) {
  const [path, q = ''] = url.split('?');
  const info = parseRequestInfo({ method, path, query: new URLSearchParams(q) }) as ResourceRequestInfo;
  return resolveResourceRoute(info, method, index);
}

const NOT_FOUND = expect.objectContaining({
  status: {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  },
});
const NOT_ALLOWED = expect.objectContaining({
  status: {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server does not allow this method on the requested resource',
    reason: 'MethodNotAllowed',
    details: {},
    code: 405,
  },
});

describe('resource routes', () => {
  it.each([
    ['GET', '/api/v1/namespaces/ns/pods', 'list', { group: '', version: 'v1', resource: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/pods', 'list', { group: '', version: 'v1', resource: 'pods' }],
    ['POST', '/api/v1/namespaces/ns/pods', 'create', { resource: 'pods', namespace: 'ns' }],
    ['DELETE', '/api/v1/namespaces/ns/pods', 'deletecollection', { resource: 'pods', namespace: 'ns' }],
    ['GET', '/api/v1/namespaces/ns/pods/p', 'get', { resource: 'pods', namespace: 'ns', name: 'p' }],
    ['HEAD', '/api/v1/namespaces/ns/pods/p', 'get', { name: 'p' }],
    ['PUT', '/api/v1/namespaces/ns/pods/p', 'update', { name: 'p' }],
    ['PATCH', '/api/v1/namespaces/ns/pods/p', 'patch', { name: 'p' }],
    ['DELETE', '/api/v1/namespaces/ns/pods/p', 'delete', { name: 'p' }],
    ['PUT', '/api/v1/namespaces/ns/pods/p/status', 'update', { name: 'p', subresource: 'status' }],
    [
      'GET',
      '/apis/apps/v1/namespaces/ns/replicasets/r/scale',
      'get',
      { group: 'apps', resource: 'replicasets', subresource: 'scale', name: 'r', namespace: 'ns' },
    ],
    ['GET', '/api/v1/namespaces', 'list', { resource: 'namespaces' }],
    ['GET', '/api/v1/namespaces/ns', 'get', { resource: 'namespaces', name: 'ns' }],
    ['PUT', '/api/v1/namespaces/ns/finalize', 'update', { resource: 'namespaces', name: 'ns', subresource: 'finalize' }],
    ['PATCH', '/api/v1/namespaces/ns/status', 'patch', { resource: 'namespaces', name: 'ns', subresource: 'status' }],
    ['POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', 'create', { group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }],
  ])('%s %s → %s', (method, url, action, target) => {
    const r = route(method, url);
    expect(r.action).toBe(action);
    expect(r.target).toEqual(expect.objectContaining(target));
    if (!url.includes('/namespaces/ns/')) expect(r.target.namespace).toBeUndefined();
  });

  it('strips the namespace of a namespace object itself', () => {
    expect(route('GET', '/api/v1/namespaces/ns').target).toEqual({ group: '', version: 'v1', resource: 'namespaces', name: 'ns' });
  });

  it('routes deprecated /watch/ paths to watch, named ones through a field selector', () => {
    expect(route('GET', '/api/v1/watch/namespaces/ns/pods')).toMatchObject({ action: 'watch', target: { resource: 'pods', namespace: 'ns' } });
    const named = route('GET', '/api/v1/watch/namespaces/ns/pods/p');
    expect(named).toMatchObject({ action: 'watch', watchName: 'p' });
    expect(named.target.name).toBeUndefined();
  });

  it.each([
    ['GET', '/api/v1/foos'],
    ['GET', '/api/v2/pods'],
    ['GET', '/apis/apps/v1/pods'],
    ['GET', '/api/v1/namespaces/ns/pods/p/bogus'],
    ['GET', '/api/v1/namespaces/ns/pods/p/status/extra'],
    ['GET', '/api/v1/namespaces/ns/configmaps/c/status'],
    ['GET', '/api/v1/pods/p'],
    ['GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/ns/clusterroles'],
    ['GET', '/api/v1/namespaces//pods'],
    ['GET', '/api/v1/proxy/namespaces/ns/pods/p'],
  ])('%s %s is 404', (method, url) => {
    expect(() => route(method, url)).toThrow(NOT_FOUND);
  });

  it.each([
    ['POST', '/api/v1/pods'],
    ['PUT', '/api/v1/namespaces/ns/pods'],
    ['POST', '/api/v1/namespaces/ns/pods/p'],
    ['DELETE', '/api/v1/namespaces/ns/pods/p/status'],
    ['POST', '/apis/apps/v1/namespaces/ns/replicasets/r/scale'],
    ['GET', '/api/v1/namespaces/ns/finalize'],
    ['DELETE', '/api/v1/namespaces'],
    ['POST', '/api/v1/watch/namespaces/ns/pods'],
  ])('%s %s is 405', (method, url) => {
    expect(() => route(method, url)).toThrow(NOT_ALLOWED);
  });
});
