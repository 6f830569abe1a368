import { createNaming } from '../../../src/naming';
import {
  attributesFor,
  authorizationStep,
  authorizeAll,
  bootstrapPolicyAuthorizer,
  forbiddenError,
  superuserAuthorizer,
} from '../../../src/gateway/steps/authorization';
import { parseRequestInfo } from '../../../src/gateway/steps/request-info';
import type { UserInfo } from '../../../src/core/api';
import { fakeExchange } from '../support/http';

const naming = createNaming('kubernetes');
const authorizers = [superuserAuthorizer, bootstrapPolicyAuthorizer(naming)];
const anonymous: UserInfo = { username: 'system:anonymous', groups: ['system:unauthenticated'] };
const alice: UserInfo = { username: 'alice', groups: ['system:authenticated'] };
const admin: UserInfo = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };

function attrs(user: UserInfo, method: string, url: string) {
  const [path, q = ''] = url.split('?');
  return attributesFor(user, parseRequestInfo({ method, path, query: new URLSearchParams(q) }));
}

async function decide(user: UserInfo, method: string, url: string) {
  return (await authorizeAll(authorizers, attrs(user, method, url))).decision;
}

describe('authorization step (placeholder policy)', () => {
  it('lets system:masters do anything', async () => {
    expect(await decide(admin, 'DELETE', '/api/v1/namespaces/default/pods')).toBe('allow');
    expect(await decide(admin, 'GET', '/metrics')).toBe('allow');
  });

  it('gives everyone the public-info-viewer paths', async () => {
    for (const p of ['/healthz', '/livez', '/readyz', '/version', '/version/']) expect(await decide(anonymous, 'GET', p)).toBe('allow');
    expect(await decide(anonymous, 'GET', '/livez/ping')).not.toBe('allow');
    expect(await decide(anonymous, 'GET', '/api')).not.toBe('allow');
    expect(await decide(anonymous, 'POST', '/healthz')).not.toBe('allow');
  });

  it('gives authenticated users discovery and the self-subject reviews', async () => {
    for (const p of ['/api', '/api/v1', '/apis', '/apis/apps/v1', '/openapi/v3', '/readyz']) expect(await decide(alice, 'GET', p)).toBe('allow');
    expect(await decide(alice, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews')).toBe('allow');
    expect(await decide(alice, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews')).toBe('allow');
    expect(await decide(alice, 'GET', '/api/v1/namespaces/default/pods')).toBe('noOpinion');
  });

  it('words a resource denial as upstream does', () => {
    const err = forbiddenError(attrs(anonymous, 'GET', '/api/v1/namespaces/default/pods'), '');
    expect(err.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" in the namespace "default"',
      reason: 'Forbidden',
      details: { kind: 'pods', group: '' },
      code: 403,
    });
    expect(forbiddenError(attrs(alice, 'GET', '/apis/apps/v1/namespaces/a/replicasets/web/scale'), '').message).toBe(
      'replicasets.apps "web" is forbidden: User "alice" cannot get resource "replicasets/scale" in API group "apps" in the namespace "a"',
    );
    expect(forbiddenError(attrs(alice, 'DELETE', '/api/v1/namespaces/x'), '').message).toBe(
      'namespaces "x" is forbidden: User "alice" cannot delete resource "namespaces" in API group "" in the namespace "x"',
    );
    expect(forbiddenError(attrs(alice, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles'), 'RBAC: oops').message).toBe(
      'clusterroles.rbac.authorization.k8s.io is forbidden: User "alice" cannot list resource "clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope: RBAC: oops',
    );
  });

  it('words a non-resource denial as upstream does', () => {
    expect(forbiddenError(attrs(anonymous, 'GET', '/api'), '').status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'forbidden: User "system:anonymous" cannot get path "/api"',
      reason: 'Forbidden',
      details: {},
      code: 403,
    });
  });

  it('runs as a step: allowed requests continue, others throw 403', async () => {
    const step = authorizationStep(authorizers);
    const allowed = fakeExchange({ url: '/version' });
    allowed.exchange.info = parseRequestInfo(allowed.exchange.request);
    allowed.exchange.user = anonymous;
    const next = jest.fn(async () => {});
    await step(next)(allowed.exchange);
    expect(next).toHaveBeenCalledTimes(1);

    const denied = fakeExchange({ url: '/api/v1/namespaces/default/pods' });
    denied.exchange.info = parseRequestInfo(denied.exchange.request);
    denied.exchange.user = anonymous;
    await expect(step(next)(denied.exchange)).rejects.toMatchObject({ code: 403 });
    expect(next).toHaveBeenCalledTimes(1);
  });

  it('stops at the first allow or deny', async () => {
    const deny = { authorize: () => ({ decision: 'deny' as const, reason: 'no' }) };
    expect(await authorizeAll([deny, superuserAuthorizer], attrs(admin, 'GET', '/api'))).toEqual({ decision: 'deny', reason: 'no' });
  });
});
