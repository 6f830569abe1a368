import { impersonationOf, impersonationStep } from '../../../src/gateway/steps/impersonation';
import type { Authorizer, AuthorizationAttributes } from '../../../src/gateway/steps/authorization';
import { createNaming } from '../../../src/naming';
import { fakeExchange } from '../support/http';

const naming = createNaming('kubernetes');
const alice = { username: 'alice', groups: ['dev', 'system:authenticated'] };

/** Allows what `allowed` says for alice, and records every check. */
function recordingAuthorizer(allowed: (a: AuthorizationAttributes) => boolean, seen: string[]): Authorizer {
  return {
    authorize(a) {
      seen.push(`${a.verb} ${a.apiGroup}/${a.resource}${a.subresource ? `/${a.subresource}` : ''} ${a.namespace}/${a.name}`);
      return allowed(a) ? { decision: 'allow' } : { decision: 'noOpinion' };
    },
  };
}

async function run(headers: Record<string, string>, allowed: (a: AuthorizationAttributes) => boolean = () => true) {
  const seen: string[] = [];
  const { exchange } = fakeExchange({ url: '/api/v1/namespaces/default/pods', headers });
  exchange.user = alice;
  const step = impersonationStep({ authorizers: [recordingAuthorizer(allowed, seen)], naming });
  await step(async () => {})(exchange);
  return { user: exchange.user, seen };
}

describe('impersonation step', () => {
  it('leaves a request without impersonation headers alone', async () => {
    expect(await run({})).toEqual({ user: alice, seen: [] });
  });

  it('acts as the user, groups, uid and extra asked for, each authorized with the impersonate verb', async () => {
    const { user, seen } = await run({
      'Impersonate-User': 'bob',
      'Impersonate-Group': 'ops, qa',
      'Impersonate-Uid': 'uid-bob',
      'Impersonate-Extra-Scopes': 'view, edit',
      'Impersonate-Extra-example.com%2Fteam': 'red',
    });
    expect(user).toEqual({
      username: 'bob',
      uid: 'uid-bob',
      groups: ['ops', 'qa', 'system:authenticated'],
      extra: { scopes: ['view', 'edit'], 'example.com/team': ['red'] },
    });
    expect(seen).toEqual([
      'impersonate /users /bob',
      'impersonate /groups /ops',
      'impersonate /groups /qa',
      'impersonate authentication.k8s.io/uids /uid-bob',
      'impersonate authentication.k8s.io/userextras/scopes /view',
      'impersonate authentication.k8s.io/userextras/scopes /edit',
      'impersonate authentication.k8s.io/userextras/example.com/team /red',
    ]);
  });

  it('gives an impersonated service account its fixed groups, authorized as serviceaccounts in its namespace', async () => {
    const { user, seen } = await run({ 'Impersonate-User': 'system:serviceaccount:apps:builder' });
    expect(user).toEqual({
      username: 'system:serviceaccount:apps:builder',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:apps', 'system:authenticated'],
    });
    expect(seen).toEqual(['impersonate /serviceaccounts apps/builder']);
  });

  it('keeps system:anonymous unauthenticated', async () => {
    expect((await run({ 'Impersonate-User': 'system:anonymous' })).user).toEqual({ username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it("refuses what the requester may not impersonate with upstream's 403", async () => {
    await expect(run({ 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' }, (a) => a.resource !== 'groups')).rejects.toMatchObject({
      status: {
        code: 403,
        reason: 'Forbidden',
        message: 'groups "system:masters" is forbidden: User "alice" cannot impersonate resource "groups" in API group "" at the cluster scope',
      },
    });
  });

  it('refuses groups, uid or extra without a user with a 400', () => {
    const { exchange } = fakeExchange({ url: '/api', headers: { 'Impersonate-Group': 'ops' } });
    expect(() => impersonationOf(exchange.request)).toThrow(expect.objectContaining({ code: 400 }));
  });
});
