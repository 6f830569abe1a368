/**
 * An independent decoder: protobufjs reflection types built from the schema (not the codec's
 * hand-written reader/writer) read the codec's bytes and the fixtures, and write bytes the codec
 * reads back.
 */
import { createProtobufCodec, decodeEnvelope, encodeEnvelope } from '../../../src/codecs/protobuf';
import { protobufjsRoot } from '../../../src/codecs/protobuf/protobufjs-root';
import { createNaming } from '../../../src/naming';
import { fixtureRows } from '../wire-fixtures';
import { realisticReplicaSet } from '../sample-objects';

const naming = createNaming('kubernetes');
const codec = createProtobufCodec(naming);
const root = protobufjsRoot();
const asObject = { longs: Number, bytes: String, defaults: false } as const;

describe('protobufjs reading the codec', () => {
  it('reads a ReplicaSet the codec wrote', () => {
    const raw = decodeEnvelope(codec.encode(realisticReplicaSet())).raw!;
    const rs = root.lookupType('apps.v1.ReplicaSet').toObject(root.lookupType('apps.v1.ReplicaSet').decode(raw), asObject) as any;
    expect(rs.metadata.name).toBe('frontend');
    expect(rs.metadata.creationTimestamp).toEqual({ seconds: Date.UTC(2024, 4, 1, 10) / 1000, nanos: 0 });
    expect(rs.metadata.managedFields[0].fieldsV1.Raw).toBe(
      Buffer.from(JSON.stringify((realisticReplicaSet() as any).metadata.managedFields[0].fieldsV1)).toString('base64'),
    );
    expect(rs.spec.replicas).toBe(3);
    const pod = rs.spec.template.spec;
    expect(pod.volumes.map((v: any) => Object.keys(v.volumeSource))).toEqual([['configMap'], ['emptyDir'], ['projected']]);
    expect(pod.volumes[1].volumeSource.emptyDir.sizeLimit).toEqual({ string: '64Mi' });
    const c = pod.containers[0];
    expect(c.resources.limits).toEqual({ cpu: { string: '500m' }, memory: { string: '128Mi' } });
    expect(c.livenessProbe.handler.httpGet.port).toEqual({ type: 1, intVal: 0, strVal: 'http' });
    expect(c.readinessProbe.handler.tcpSocket.port).toEqual({ type: 0, intVal: 80, strVal: '' });
    expect(c.env[2].valueFrom.secretKeyRef).toEqual({ localObjectReference: { name: 'redis' }, key: 'password', optional: false });
    expect(pod.securityContext.supplementalGroups).toEqual([3000, 4000]);
    expect(pod.enableServiceLinks).toBe(false);
  });

  it('writes a Pod the codec reads', () => {
    const Pod = root.lookupType('core.v1.Pod');
    const message = Pod.fromObject({
      metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' }, creationTimestamp: { seconds: 1700000000, nanos: 0 } },
      spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], resources: { requests: { cpu: { string: '1' } } } }] },
    });
    const raw = Pod.encode(message).finish();
    const body = encodeEnvelope({ apiVersion: 'v1', kind: 'Pod', raw, contentEncoding: '', contentType: '' });
    expect(codec.decode(body)).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', namespace: 'ns', creationTimestamp: '2023-11-14T22:13:20Z', labels: { a: 'b' } },
      spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }], resources: { requests: { cpu: '1' } } }] },
      status: {},
    });
  });
});

describe('protobufjs reading the fixtures', () => {
  it.each(fixtureRows())('%s re-encodes to the same raw bytes', (_name, fixture) => {
    const envelope = decodeEnvelope(fixture.pb);
    const served = codec.registry.kind(envelope.apiVersion, envelope.kind)!;
    const type = root.lookupType(served.type.name);
    const raw = Buffer.from(envelope.raw!);
    expect(Buffer.from(type.encode(type.decode(raw)).finish()).equals(raw)).toBe(true);
  });
});
