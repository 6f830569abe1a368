/**
 * Round trips of realistic objects: what a client sends comes back as upstream's JSON of the
 * decoded Go struct (zero-value rules included), and re-encoding is byte-stable.
 */
import { createProtobufCodec, decodeEnvelope, ProtobufEncodeError, ProtobufNotMarshalableError } from '../../../src/codecs/protobuf';
import { CodecError } from '../../../src/gateway/codecs/codec';
import { createNaming } from '../../../src/naming';
import { realisticReplicaSet } from '../sample-objects';

const naming = createNaming('kubernetes');
const codec = createProtobufCodec(naming);

function roundTrip(value: unknown): unknown {
  return codec.decode(codec.encode(value));
}

/** What upstream's JSON of the decoded object adds: the zero values Go writes without omitempty. */
function expectedAfterRoundTrip(): Record<string, unknown> {
  const rs = realisticReplicaSet() as any;
  rs.spec.template.metadata.creationTimestamp = null;
  return rs;
}

describe('protobuf round trips', () => {
  it('keeps every field of a realistic ReplicaSet, pod template included', () => {
    const decoded = roundTrip(realisticReplicaSet());
    expect(decoded).toEqual(expectedAfterRoundTrip());
  });

  it('is byte-stable: encode(decode(bytes)) = bytes', () => {
    const bytes = codec.encode(realisticReplicaSet());
    expect(codec.encode(codec.decode(bytes)).equals(bytes)).toBe(true);
  });

  it('keeps pointer fields set to their zero value (replicas: 0, optional: false)', () => {
    const rs = realisticReplicaSet() as any;
    rs.spec.replicas = 0;
    const decoded = roundTrip(rs) as any;
    expect(decoded.spec.replicas).toBe(0);
    expect(decoded.spec.template.spec.containers[0].env[2].valueFrom.secretKeyRef.optional).toBe(false);
    expect(decoded.spec.template.spec.priority).toBe(0);
  });

  it("writes the core group's Event with upstream's field numbers, and Go's members of a bare one", () => {
    expect(roundTrip({ apiVersion: 'v1', kind: 'Event' })).toEqual({
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { creationTimestamp: null },
      involvedObject: {},
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
    });
    const ev = {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name: 'e', namespace: 'default', creationTimestamp: null },
      involvedObject: { kind: 'Pod', name: 'p' },
      reason: 'R',
      message: 'm',
      source: { component: 'kubelet' },
      firstTimestamp: '2026-01-01T00:00:00Z',
      lastTimestamp: '2026-01-01T00:00:00Z',
      count: 2,
      type: 'Normal',
      eventTime: '2026-01-01T00:00:00.123456Z',
      series: { count: 2, lastObservedTime: '2026-01-01T00:00:00.123456Z' },
      action: 'A',
      related: { kind: 'Node', name: 'n' },
      reportingComponent: 'ctl',
      reportingInstance: 'i',
    };
    expect(roundTrip(ev)).toEqual(ev);
    // reason 3, message 4, count 8 (varint), action 12, reportingComponent 14, reportingInstance 15.
    const hex = codec.encode(ev).toString('hex');
    for (const field of ['1a0152', '22016d', '4002', '620141', '720363746c', '7a0169']) expect(hex).toContain(field);
  });

  it('writes the zero values Go writes for a bare object', () => {
    expect(roundTrip({ apiVersion: 'apps/v1', kind: 'ReplicaSet' })).toEqual({
      kind: 'ReplicaSet',
      apiVersion: 'apps/v1',
      metadata: { creationTimestamp: null },
      spec: { selector: null, template: { metadata: { creationTimestamp: null }, spec: { containers: null } } },
      status: { replicas: 0 },
    });
    expect(roundTrip({ apiVersion: 'v1', kind: 'Pod' })).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { creationTimestamp: null },
      spec: { containers: null },
      status: {},
    });
  });

  it('drops what Go drops: empty omitempty values, unknown fields, null pointers', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: '', labels: {} }, data: {}, bogus: 1, immutable: null };
    expect(roundTrip(cm)).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c', creationTimestamp: null } });
  });

  it('writes int-or-string, quantities, bytes and times as upstream does', () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', deletionTimestamp: '2024-01-02T03:04:05+01:00' },
      data: { k: 'aGVsbG8=', e: '' },
      type: 'Opaque',
    };
    expect(roundTrip(secret)).toEqual({
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 's', creationTimestamp: null, deletionTimestamp: '2024-01-02T02:04:05Z' },
      data: { e: '', k: 'aGVsbG8=' },
      type: 'Opaque',
    });
  });

  it('keeps the MicroTime fraction and the map of wrapped lists', () => {
    const event = { apiVersion: `${naming.groups.events}/v1`, kind: 'Event', metadata: { name: 'e' }, eventTime: '2024-01-01T00:00:00.123456Z' };
    expect((roundTrip(event) as any).eventTime).toBe('2024-01-01T00:00:00.123456Z');
    const review = {
      apiVersion: `${naming.groups.authentication}/v1`,
      kind: 'TokenReview',
      spec: { token: 't' },
      status: { user: { username: 'u', extra: { scopes: ['a', 'b'], empty: [] } } },
    };
    expect((roundTrip(review) as any).status.user.extra).toEqual({ empty: null, scopes: ['a', 'b'] });
  });

  it('round-trips lists: ListMeta and items without TypeMeta', () => {
    const rs = realisticReplicaSet();
    const list = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSetList',
      metadata: { resourceVersion: '99', continue: 'token', remainingItemCount: 0 },
      items: [rs, rs],
    };
    const { kind: _k, apiVersion: _a, ...item } = expectedAfterRoundTrip();
    expect(roundTrip(list)).toEqual({ kind: 'ReplicaSetList', apiVersion: 'apps/v1', metadata: list.metadata, items: [item, item] });
    expect(roundTrip({ apiVersion: 'v1', kind: 'PodList', metadata: {} })).toEqual({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: null });
  });

  it('round-trips Status, Scale and discovery documents', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "x" not found',
      reason: 'NotFound',
      details: { name: 'x', kind: 'pods', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec' }] },
      code: 404,
    };
    expect(roundTrip(status)).toEqual(status);
    const scale = {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'rs', creationTimestamp: null },
      spec: { replicas: 2 },
      status: { replicas: 1, selector: 'a=b' },
    };
    expect(roundTrip(scale)).toEqual(scale);
    const resources = {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'apps/v1',
      resources: [{ name: 'replicasets', singularName: 'replicaset', namespaced: true, kind: 'ReplicaSet', verbs: ['get', 'list'], shortNames: ['rs'] }],
    };
    expect(roundTrip(resources)).toEqual(resources);
  });

  it('decodes DeleteOptions sent under any served group version', () => {
    const options = { kind: 'DeleteOptions', apiVersion: 'apps/v1', propagationPolicy: 'Foreground', gracePeriodSeconds: 0 };
    expect(roundTrip(options)).toEqual(options);
  });

  it('puts the kind and apiVersion in the envelope, not in raw', () => {
    const envelope = decodeEnvelope(codec.encode(realisticReplicaSet()));
    expect([envelope.apiVersion, envelope.kind]).toEqual(['apps/v1', 'ReplicaSet']);
    expect(Buffer.from(envelope.raw!).includes(Buffer.from('apps/v1'))).toBe(true); // ownerReferences only
    expect(Buffer.from(envelope.raw!)[0]).toBe(0x0a); // metadata, field 1
  });

  it('refuses kinds without a protobuf form, and bad values', () => {
    expect(() => codec.encode({ apiVersion: `${naming.groups.meta}/v1`, kind: 'Table' })).toThrow(ProtobufNotMarshalableError);
    expect(codec.canEncode({ apiVersion: 'v1', kind: 'Pod' })).toBe(true);
    expect(codec.canEncode({ kind: 'Pod' })).toBe(false);
    expect(() => codec.encode({ apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 5 }] } })).toThrow(
      new ProtobufEncodeError('expected a string, got 5', ['spec', 'containers', 'name']),
    );
  });

  it('reports malformed bodies as CodecError with upstream messages', () => {
    expect(() => codec.decode(Buffer.alloc(0))).toThrow(new CodecError(codec.mediaType, 'empty data'));
    expect(() => codec.decode(Buffer.from('{}'))).toThrow(/does not appear to be a protobuf message/);
    expect(() => codec.decode(Buffer.from([0x6b, 0x38, 0x73, 0x00]))).toThrow(/empty body/);
    const unknownKind = codec.encode({ apiVersion: 'v1', kind: 'Pod' });
    unknownKind.set(Buffer.from('Pox'), unknownKind.indexOf('Pod'));
    expect(() => codec.decode(unknownKind)).toThrow(/no kind "Pox" is registered/);
    const truncated = codec.encode(realisticReplicaSet()).subarray(0, 200);
    expect(() => codec.decode(truncated)).toThrow(CodecError);
  });
});
