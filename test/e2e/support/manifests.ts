/** The manifests the kubectl e2e tests feed to `kubectl create|apply -f`. */

/** ReplicaSet `web` (one nginx container, selector `app=web`) as kubectl users write it. */
export function webReplicaSetYaml(namespace: string, replicas: number): string {
  return `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web
  namespace: ${namespace}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
`;
}
