/**
 * The platform profile changes names only: media type, group names in apiVersion; the object
 * bytes inside `raw` are the same as under the kubernetes profile.
 */
import { createProtobufCodec, decodeEnvelope } from '../../../src/codecs/protobuf';
import { createNaming } from '../../../src/naming';
import { fixtureRows } from '../wire-fixtures';

const kubeNaming = createNaming('kubernetes');
const platformNaming = createNaming('platform');
const kube = createProtobufCodec(kubeNaming);
const platform = createProtobufCodec(platformNaming);

function platformApiVersion(apiVersion: string): string {
  return apiVersion.replace(`.${kubeNaming.groupDomain}/`, `.${platformNaming.groupDomain}/`);
}

describe('naming profiles', () => {
  it('take the media type from the profile', () => {
    expect(kube.mediaType).toBe(kubeNaming.mediaTypes.protobuf);
    expect(platform.mediaType).toBe(platformNaming.mediaTypes.protobuf);
    expect(platform.stream.mediaType).toBe(`${platformNaming.mediaTypes.protobuf};stream=watch`);
  });

  it('serve the same kinds under the profile group names', () => {
    const names = (c: typeof kube) => c.registry.kinds.map((k) => `${k.apiVersion} ${k.kind}`);
    expect(names(platform)).toEqual(names(kube).map(platformApiVersion));
    expect(names(platform).join('\n')).not.toContain(kubeNaming.groupDomain);
    expect(names(kube).join('\n')).not.toContain(platformNaming.groupDomain);
    expect(platform.registry.kind(`${platformNaming.groups.rbac}/v1`, 'Role')?.type.name).toBe('rbac.v1.Role');
    expect(platform.registry.kind(`${kubeNaming.groups.rbac}/v1`, 'Role')).toBeUndefined();
    expect(kube.registry.kind(`${platformNaming.groups.rbac}/v1`, 'Role')).toBeUndefined();
  });

  it('share one set of type definitions', () => {
    expect(platform.registry.type('core.v1.PodSpec')).toBe(kube.registry.type('core.v1.PodSpec'));
  });
});

describe('fixtures under the platform profile', () => {
  it.each(fixtureRows())('%s differs only in the names', (_name, fixture) => {
    const object = kube.decode(fixture.pb) as { apiVersion: string };
    const renamed = { ...object, apiVersion: platformApiVersion(object.apiVersion) };
    const bytes = platform.encode(renamed);
    const [a, b] = [decodeEnvelope(fixture.pb), decodeEnvelope(bytes)];
    expect(Buffer.from(b.raw!).equals(Buffer.from(a.raw!))).toBe(true);
    expect(b.kind).toBe(a.kind);
    expect(b.apiVersion).toBe(platformApiVersion(a.apiVersion));
    expect(platform.decode(bytes)).toEqual(renamed);
  });
});
