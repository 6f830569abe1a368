import { builtinResources } from '../../src/core/resources';
import { createNaming } from '../../src/naming';
import { applyRuntimeConfig, parseRuntimeConfig } from '../../src/server/runtime-config';

const defs = builtinResources(createNaming('kubernetes'));
const served = (text: string) => applyRuntimeConfig(defs, parseRuntimeConfig(text)).map((d) => `${d.group}/${d.version}/${d.resource}`);

describe('--runtime-config', () => {
  it('parses key[=value] pairs, an omitted value meaning true, values as Go booleans', () => {
    expect(parseRuntimeConfig('apps/v1=false, v1 ,api/all=F,batch/v1=1')).toEqual([
      ['apps/v1', false],
      ['v1', true],
      ['api/all', false],
      ['batch/v1', true],
    ]);
    expect(() => parseRuntimeConfig('apps/v1=maybe')).toThrow('invalid value maybe for key apps/v1');
  });

  it('switches group versions and single resources off, leaving the rest served', () => {
    const all = served('');
    expect(all).toContain('apps/v1/replicasets');
    const noApps = served('apps/v1=false');
    expect(noApps.some((k) => k.startsWith('apps/'))).toBe(false);
    expect(noApps).toHaveLength(all.length - all.filter((k) => k.startsWith('apps/')).length);
    expect(served('api/v1/secrets=false')).not.toContain('/v1/secrets');
    expect(served('apps/v1/replicasets=false')).not.toContain('apps/v1/replicasets');
  });

  it('applies the wildcards first and the specific keys after them, whatever the order', () => {
    const onlyCoreAndApps = served('apps/v1=true,api/all=false,v1=true');
    expect(new Set(onlyCoreAndApps.map((k) => k.split('/').slice(0, 2).join('/')))).toEqual(new Set(['/v1', 'apps/v1']));
    // Every served version is GA: api/beta and api/alpha touch nothing.
    expect(served('api/beta=false,api/alpha=false')).toEqual(served(''));
  });

  it('leaves a version off whose removal release has come (flowcontrol v1beta3 in 1.32), unless switched on', () => {
    const beta = 'flowcontrol.apiserver.k8s.io/v1beta3';
    expect(served('').some((k) => k.startsWith(`${beta}/`))).toBe(false);
    expect(served('').filter((k) => k.startsWith('flowcontrol.apiserver.k8s.io/v1/'))).toEqual([
      'flowcontrol.apiserver.k8s.io/v1/flowschemas',
      'flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations',
    ]);
    expect(served(`${beta}=true`)).toContain(`${beta}/flowschemas`);
    expect(served('api/beta=true')).toContain(`${beta}/prioritylevelconfigurations`);
  });

  it('refuses unknown group versions and resources, and switching off the core group', () => {
    expect(() => served('batch/v1=false')).toThrow('unknown api groups batch/v1');
    expect(() => served('apps/v1/deployments=false')).toThrow('unknown resource deployments in apps/v1/deployments');
    expect(() => served('api/all=false')).toThrow('the core group version v1 (namespaces) cannot be disabled');
    expect(() => served('api/v1/namespaces=false')).toThrow(/cannot be disabled/);
  });
});
