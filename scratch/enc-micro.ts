import { orderedJsonBeforeVersion, encodeOrderedJsonBytes } from '../src/codecs/json-order';
import { schemaRegistry } from '../src/schema';
import { createNaming } from '../src/naming';
const naming = createNaming('kubernetes');
const reg = schemaRegistry(naming);
const rs: any = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-1234', namespace: 'bench', uid: '8975219b-e9bf-429c-9258-e73bef4a2a4a', generation: 1, creationTimestamp: '2026-11-27T14:11:15Z', labels: { app: 'web', tier: 'frontend' }, annotations: { 'example.com/note': 'a bench object' }, managedFields: [{ manager: 'bench', operation: 'Update', apiVersion: 'apps/v1', time: '2026-11-27T14:11:15Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } }, 'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:image': {}, 'f:name': {}, 'f:ports': {}, 'f:resources': {} } } } } } } }] }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { creationTimestamp: null, labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80, protocol: 'TCP' }], resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } }, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }], restartPolicy: 'Always', terminationGracePeriodSeconds: 30, dnsPolicy: 'ClusterFirst', securityContext: {}, schedulerName: 'default-scheduler' } } }, status: { replicas: 0 } };
const N = 200000;
for (let r = 0; r < 3; r++) {
  let t = process.hrtime.bigint();
  let len = 0;
  for (let i = 0; i < N; i++) len += orderedJsonBeforeVersion(reg, rs)!.bytes.length;
  const a = Number(process.hrtime.bigint() - t) / N / 1000;
  t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) len += Buffer.from(JSON.stringify(rs)).length;
  const b = Number(process.hrtime.bigint() - t) / N / 1000;
  console.log(`ordered ${a.toFixed(2)} µs, JSON.stringify+Buffer ${b.toFixed(2)} µs, bytes ${orderedJsonBeforeVersion(reg, rs)!.bytes.length}`);
}
