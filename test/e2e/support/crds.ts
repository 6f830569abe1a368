/** The CronTab definition of upstream's custom resource walkthrough, as tests install it. */
export function cronTabCrd(overrides: { group?: string; plural?: string; kind?: string; shortNames?: string[] } = {}) {
  const group = overrides.group ?? 'stable.example.com';
  const plural = overrides.plural ?? 'crontabs';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: plural.replace(/s$/, ''), kind: overrides.kind ?? 'CronTab', shortNames: overrides.shortNames ?? ['ct'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A CronTab runs a command on a schedule.',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    cronSpec: { type: 'string', description: 'The schedule, in cron format.' },
                    image: { type: 'string' },
                    replicas: { type: 'integer', minimum: 0, default: 1 },
                    selector: { type: 'string' },
                  },
                },
                status: { type: 'object', properties: { replicas: { type: 'integer' }, labelSelector: { type: 'string' } } },
              },
            },
          },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.labelSelector' },
          },
          additionalPrinterColumns: [
            { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}
