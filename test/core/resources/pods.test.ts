import type { Pod } from '../../../src/core/resources';
import { isPodReady, podQosClass } from '../../../src/core/resources/pods';
import { create, definition, stored, update } from './through-store';

const pods = definition('pods');
const pod = (spec: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'web', namespace: 'default' },
  spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
  ...extra,
});

describe('pods: defaults', () => {
  it('fills upstream pod and container defaults and sets status on create', async () => {
    const { object, messages } = await create<Pod>(pods, pod({}, { status: { phase: 'Running' } }));
    expect(messages).toEqual([]);
    expect(object.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
      securityContext: {},
      enableServiceLinks: true,
    });
    expect(object.spec.containers[0]).toEqual({
      name: 'app',
      image: 'nginx:1.27',
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      resources: {},
    });
    expect(object.status).toEqual({ phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('pulls untagged and latest images Always', async () => {
    const { object } = await create<Pod>(
      pods,
      pod({
        containers: [
          { name: 'a', image: 'nginx' },
          { name: 'b', image: 'reg:5000/x:latest' },
          { name: 'c', image: 'x@sha256:ab' },
        ],
      }),
    );
    expect(object.spec.containers.map((c) => c.imagePullPolicy)).toEqual(['Always', 'Always', 'IfNotPresent']);
  });

  it('keeps explicit values, copies limits to requests and defaults port protocol', async () => {
    const { object } = await create<Pod>(
      pods,
      pod({
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 0,
        hostNetwork: true,
        containers: [{ name: 'a', image: 'x:1', ports: [{ containerPort: 80 }], resources: { limits: { cpu: '1', memory: '1Gi' } } }],
      }),
    );
    expect(object.spec.restartPolicy).toBe('Never');
    expect(object.spec.terminationGracePeriodSeconds).toBe(0);
    expect(object.spec.containers[0]!.ports).toEqual([{ containerPort: 80, hostPort: 80, protocol: 'TCP' }]);
    expect(object.spec.containers[0]!.resources?.requests).toEqual({ cpu: '1', memory: '1Gi' });
    expect(object.status?.qosClass).toBe('Guaranteed');
  });

  it('marks a gated pod unschedulable', async () => {
    const { object } = await create<Pod>(pods, pod({ schedulingGates: [{ name: 'example.com/gate' }] }));
    expect(object.status?.conditions?.[0]).toMatchObject({ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' });
  });

  it('keeps serviceAccount and serviceAccountName in step', async () => {
    expect((await create<Pod>(pods, pod({ serviceAccount: 'builder' }))).object.spec.serviceAccountName).toBe('builder');
    expect((await create<Pod>(pods, pod({ serviceAccountName: 'x' }))).object.spec.serviceAccount).toBe('x');
  });
});

describe('pods: QoS class', () => {
  it('is Burstable with requests below limits', async () => {
    expect(podQosClass({ containers: [{ name: 'a', resources: { requests: { cpu: '500m' }, limits: { cpu: '1' } } }] })).toBe('Burstable');
    expect(podQosClass({ containers: [{ name: 'a', resources: { requests: { cpu: '1000m', memory: '1Gi' }, limits: { cpu: '1', memory: '1024Mi' } } }] })).toBe(
      'Guaranteed',
    );
  });

  it('compares requests with limits as exact amounts (9m is 0.009)', () => {
    expect(podQosClass({ containers: [{ name: 'a', resources: { requests: { cpu: '9m', memory: '1Gi' }, limits: { cpu: '0.009', memory: '1Gi' } } }] })).toBe(
      'Guaranteed',
    );
  });
});

describe('pods: validation', () => {
  it('requires at least one container', async () => {
    expect((await create(pods, pod({ containers: [] }))).messages).toEqual(['spec.containers: Required value']);
  });

  it('requires container names and images', async () => {
    expect((await create(pods, pod({ containers: [{ name: '' }] }))).messages).toEqual([
      'spec.containers[0].name: Required value',
      'spec.containers[0].image: Required value',
    ]);
  });

  it('wants DNS-label container names, unique across init and regular containers', async () => {
    const { messages } = await create(
      pods,
      pod({
        containers: [
          { name: 'A', image: 'x' },
          { name: 'b', image: 'x' },
        ],
        initContainers: [{ name: 'b', image: 'y' }],
      }),
    );
    expect(messages[0]).toMatch(/^spec.containers\[0\].name: Invalid value: "A": a lowercase RFC 1123 label must consist of/);
    expect(messages[1]).toBe('spec.initContainers[0].name: Duplicate value: "b"');
    expect(
      (
        await create(
          pods,
          pod({
            containers: [
              { name: 'a', image: 'x' },
              { name: 'a', image: 'y' },
            ],
          }),
        )
      ).messages,
    ).toEqual(['spec.containers[1].name: Duplicate value: "a"']);
  });

  it('offers the supported restart and DNS policies', async () => {
    expect((await create(pods, pod({ restartPolicy: 'Sometimes', dnsPolicy: 'Custom' }))).messages).toEqual([
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
      'spec.dnsPolicy: Unsupported value: "Custom": supported values: "ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"',
    ]);
    expect((await create(pods, pod({ dnsPolicy: 'None' }))).messages).toEqual([
      'spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None',
    ]);
  });

  it('checks ports, env names, pull policy and termination message policy', async () => {
    const { messages } = await create(
      pods,
      pod({
        containers: [
          {
            name: 'a',
            image: 'x',
            imagePullPolicy: 'Sometimes',
            terminationMessagePolicy: 'Log',
            env: [{ name: '' }, { name: 'A=B' }],
            ports: [
              { name: 'http', containerPort: 70000, protocol: 'ICMP' },
              { name: 'http', containerPort: 80 },
            ],
          },
        ],
      }),
    );
    expect(messages).toEqual([
      `spec.containers[0].terminationMessagePolicy: Invalid value: "Log": must be 'File' or 'FallbackToLogsOnError'`,
      'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
      'spec.containers[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      'spec.containers[0].ports[1].name: Duplicate value: "http"',
      'spec.containers[0].env[0].name: Required value',
      `spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
      'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ]);
  });

  it('checks name-like spec fields', async () => {
    const { errors } = await create(
      pods,
      pod({ nodeName: 'Node_1', serviceAccountName: 'SA', hostname: 'a.b', activeDeadlineSeconds: 0, volumes: [{ name: 'v' }, { name: 'v' }] }),
    );
    expect(errors.map((e) => e.field)).toEqual([
      'spec.volumes[1].name',
      'spec.serviceAccountName',
      'spec.nodeName',
      'spec.activeDeadlineSeconds',
      'spec.hostname',
    ]);
  });

  it('refuses ephemeral containers on create', async () => {
    expect((await create(pods, pod({ ephemeralContainers: [{ name: 'debug', image: 'busybox' }] }))).messages).toEqual([
      'spec.ephemeralContainers: Forbidden: cannot be set on create',
    ]);
  });
});

describe('pods: updates', () => {
  const old = () => stored<Pod>(pods, pod({ activeDeadlineSeconds: 100 }));

  it('allows image changes and a shorter activeDeadlineSeconds', async () => {
    const o = await old();
    const next = JSON.parse(JSON.stringify(o)) as Pod;
    next.spec.containers[0]!.image = 'nginx:1.28';
    next.spec.activeDeadlineSeconds = 50;
    expect((await update(pods, next, o)).messages).toEqual([]);
  });

  it('refuses other spec changes with upstream message', async () => {
    const o = await old();
    const { messages } = await update(pods, { ...o, spec: { ...o.spec, nodeName: 'node-1' } }, o);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(
      /^spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`,`spec.initContainers\[\*\].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` \(only additions to existing tolerations\),`spec.terminationGracePeriodSeconds` \(allow it to be set to 1 if it was previously negative\)\n/,
    );
    expect(messages[0]).toContain('nodeName');
  });

  it('refuses adding containers and raising or dropping the deadline', async () => {
    const o = await old();
    expect((await update(pods, { ...o, spec: { ...o.spec, containers: [...o.spec.containers, { name: 'b', image: 'x' }] } }, o)).messages).toEqual([
      'spec.containers: Forbidden: pod updates may not add or remove containers',
    ]);
    expect((await update(pods, { ...o, spec: { ...o.spec, activeDeadlineSeconds: 200 } }, o)).messages).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: 200: must be less than or equal to previous value',
    ]);
    expect((await update(pods, { ...o, spec: { ...o.spec, activeDeadlineSeconds: undefined } }, o)).messages).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: "null": must not update from a positive integer to nil value',
    ]);
  });

  it('allows adding tolerations and removing scheduling gates', async () => {
    const o = await stored<Pod>(pods, pod({ tolerations: [{ key: 'a', operator: 'Exists' }], schedulingGates: [{ name: 'example.com/g' }] }));
    const next = {
      ...o,
      spec: {
        ...o.spec,
        tolerations: [
          { key: 'a', operator: 'Exists' },
          { key: 'b', operator: 'Exists' },
        ],
        schedulingGates: [],
      },
    };
    expect((await update(pods, next, o)).messages).toEqual([]);
  });

  it('keeps status on the main resource and spec on /status', async () => {
    const o = await old();
    expect((await update<Pod>(pods, { ...o, status: { phase: 'Running' } }, o)).object.status?.phase).toBe('Pending');
    const viaStatus = await update<Pod>(pods, { ...o, spec: { ...o.spec, nodeName: 'n1' }, status: { phase: 'Running', podIP: '10.0.0.1' } }, o, 'status');
    expect(viaStatus.messages).toEqual([]);
    expect(viaStatus.object.spec.nodeName).toBeUndefined();
    expect(viaStatus.object.status).toMatchObject({ phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }], qosClass: 'BestEffort' });
  });

  it('validates status pod IPs, nominated node and condition types', async () => {
    const o = await old();
    const { messages } = await update(
      pods,
      {
        ...o,
        status: {
          podIPs: [{ ip: 'nope' }],
          nominatedNodeName: 'Bad_Node',
          conditions: [
            { type: 'bad type', status: 'True' },
            { type: 'Ready', status: 'True' },
          ],
        },
      },
      o,
      'status',
    );
    expect(messages[0]).toMatch(/^metadata.conditions\[0\].Type: Invalid value: "bad type": name part must consist of/);
    expect(messages[1]).toMatch(/^status.nominatedNodeName: Invalid value: "Bad_Node": a lowercase RFC 1123 subdomain/);
    expect(messages.slice(2)).toEqual(['status.podIPs[0]: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)']);
  });
});

describe('pods: field selectors', () => {
  it('exposes the fields upstream registers', async () => {
    const p = await stored<Pod>(pods, pod({ nodeName: 'n1', serviceAccountName: 'sa' }));
    expect(pods.selectableFields?.(p)).toEqual({
      'spec.nodeName': 'n1',
      'spec.restartPolicy': 'Always',
      'spec.schedulerName': 'default-scheduler',
      'spec.serviceAccountName': 'sa',
      'spec.hostNetwork': 'false',
      'status.phase': 'Pending',
      'status.podIP': '',
      'status.nominatedNodeName': '',
    });
  });
});

describe('pods: /status and owner references', () => {
  it('never changes owner references through /status', async () => {
    const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'u1', controller: true };
    const o = await stored<Pod>(pods, pod({}, { metadata: { name: 'web', namespace: 'default', ownerReferences: [owner] } }));
    const next = { ...o, metadata: { ...o.metadata, ownerReferences: [] }, status: { phase: 'Running' } };
    expect((await update<Pod>(pods, next, o, 'status')).object.metadata?.ownerReferences).toEqual([owner]);
  });
});

describe('pods: readiness', () => {
  const withConditions = (conditions: Array<{ type: string; status: string }>) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p' },
    status: { conditions },
  });

  it("reads the first Ready condition, as upstream's IsPodReady does", () => {
    expect(
      isPodReady(
        withConditions([
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'True' },
        ]),
      ),
    ).toBe(true);
    expect(
      isPodReady(
        withConditions([
          { type: 'Ready', status: 'False' },
          { type: 'Ready', status: 'True' },
        ]),
      ),
    ).toBe(false);
    expect(isPodReady(withConditions([{ type: 'ContainersReady', status: 'True' }]))).toBe(false);
    expect(isPodReady({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } })).toBe(false);
  });
});
