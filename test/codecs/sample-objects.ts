/** Realistic objects shared by the codec tests. */

/** A ReplicaSet as a Deployment would own it, with a pod template that uses most of PodSpec. */
export function realisticReplicaSet(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: 'frontend',
      namespace: 'default',
      uid: '5f1c3a52-5a8b-4b7e-9d8c-0a6f7f0a1c11',
      resourceVersion: '1234',
      generation: 3,
      creationTimestamp: '2024-05-01T10:00:00Z',
      labels: { app: 'guestbook', tier: 'frontend' },
      annotations: { 'deployment.example/revision': '2' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'frontend', uid: '0b9e', controller: true, blockOwnerDeletion: true }],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'apps/v1',
          time: '2024-05-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': { 'f:spec': { 'k:{"name":"php-redis"}': { '.': {} } } } } },
        },
      ],
    },
    spec: {
      replicas: 3,
      minReadySeconds: 5,
      selector: { matchLabels: { tier: 'frontend' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'stage'] }] },
      template: {
        metadata: { labels: { tier: 'frontend' } },
        spec: {
          volumes: [
            { name: 'config', configMap: { name: 'frontend-config', defaultMode: 420, items: [{ key: 'a', path: 'a.conf' }] } },
            { name: 'cache', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
            {
              name: 'token',
              projected: {
                sources: [{ serviceAccountToken: { audience: 'api', expirationSeconds: 3600, path: 'token' } }],
                defaultMode: 420,
              },
            },
          ],
          initContainers: [{ name: 'init', image: 'busybox:1.36', command: ['sh', '-c', 'true'], resources: {} }],
          containers: [
            {
              name: 'php-redis',
              image: 'gcr.example/google-samples/gb-frontend:v5',
              ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
              env: [
                { name: 'GET_HOSTS_FROM', value: 'dns' },
                { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
                { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'redis', key: 'password', optional: false } } },
              ],
              resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '100m', memory: '100Mi' } },
              volumeMounts: [{ name: 'config', mountPath: '/etc/frontend', readOnly: true }],
              livenessProbe: {
                httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP', httpHeaders: [{ name: 'X-Probe', value: '1' }] },
                initialDelaySeconds: 3,
                periodSeconds: 10,
                timeoutSeconds: 1,
                successThreshold: 1,
                failureThreshold: 3,
              },
              readinessProbe: { tcpSocket: { port: 80 }, periodSeconds: 5 },
              lifecycle: { preStop: { sleep: { seconds: 5 } } },
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 1000,
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                seccompProfile: { type: 'RuntimeDefault' },
              },
              terminationMessagePath: '/dev/termination-log',
              terminationMessagePolicy: 'File',
              imagePullPolicy: 'IfNotPresent',
            },
          ],
          restartPolicy: 'Always',
          terminationGracePeriodSeconds: 30,
          dnsPolicy: 'ClusterFirst',
          nodeSelector: { 'node.example/pool': 'web' },
          serviceAccountName: 'frontend',
          securityContext: { fsGroup: 2000, supplementalGroups: [3000, 4000], sysctls: [{ name: 'net.core.somaxconn', value: '1024' }] },
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: { tier: 'frontend' } }, topologyKey: 'zone' } },
              ],
            },
          },
          schedulerName: 'default-scheduler',
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule', tolerationSeconds: 60 }],
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { tier: 'frontend' } } },
          ],
          priority: 0,
          enableServiceLinks: false,
        },
      },
    },
    status: {
      replicas: 3,
      fullyLabeledReplicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 3,
      conditions: [{ type: 'ReplicaFailure', status: 'False', lastTransitionTime: '2024-05-01T10:01:00Z', reason: 'Ok', message: 'fine' }],
    },
  };
}
