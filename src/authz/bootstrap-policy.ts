/**
 * Upstream's default RBAC policy, as data: the ClusterRoles, ClusterRoleBindings, Roles and
 * RoleBindings kube-apiserver creates at start (its `bootstrappolicy` package with the default
 * feature gates of 1.32: the policy roles, the `system:controller:*` roles of the controller
 * manager's controllers and the namespaced roles in the system and public namespaces).
 * `reconcilePolicy` (./reconcile) applies it.
 *
 * Every vendor-dependent name comes from the naming profile: API groups below the group
 * domain, label, annotation and signer keys below the key domain, the system and public
 * namespaces. User, group and service-account names keep upstream's spelling.
 *
 * Roles are written compactly: `r(verbs, groups, resources, names?)` with space-separated
 * verbs, resources and resource names, and `urls(verbs, paths)` for non-resource rules; rules
 * keep upstream's order. Aggregated roles (admin, edit, view) carry only their
 * `aggregationRule`; their rules are `null`, as upstream creates them, and the aggregation
 * controller fills them.
 */
import type { ApiObject } from '../core';
import type { Naming } from '../naming';

export interface BootstrapPolicy {
  clusterRoles: ApiObject[];
  clusterRoleBindings: ApiObject[];
  roles: ApiObject[];
  roleBindings: ApiObject[];
}

interface Rule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  apiGroup?: string;
  name: string;
  namespace?: string;
}

const words = (s: string): string[] => s.split(' ').filter(Boolean);

/** A resource rule: verbs, groups (one or a list), resources, optional resource names. */
function r(verbs: string, groups: string | string[], resources: string, names?: string | string[]): Rule {
  const rule: Rule = { verbs: words(verbs), apiGroups: typeof groups === 'string' ? [groups] : [...groups], resources: words(resources) };
  if (names !== undefined) rule.resourceNames = typeof names === 'string' ? words(names) : [...names];
  return rule;
}

/** A non-resource rule. */
function urls(verbs: string, paths: string): Rule {
  return { verbs: words(verbs), nonResourceURLs: words(paths) };
}

// Verb sets upstream uses over and over.
const READ = 'get list watch';
const WRITE = 'create delete deletecollection patch update';
const READ_WRITE = 'create delete deletecollection get list patch update watch';
const CRUD = 'create delete get list patch update watch';
const EVENT_WRITE = 'create patch update';

// Upstream's unsuffixed groups, the same under every profile.
const CORE = '';
const APPS = 'apps';
const EXT = 'extensions';
const BATCH = 'batch';
const POLICY = 'policy';
const AUTOSCALING = 'autoscaling';
const ANY = '*';

export function bootstrapPolicy(naming: Naming): BootstrapPolicy {
  const g = (prefix: string): string => naming.group(prefix);
  const RBAC = naming.groups.rbac;
  const AUTHN = naming.groups.authentication;
  const AUTHZ = naming.groups.authorization;
  const CERTS = g('certificates');
  const COORD = g('coordination');
  const DISCOVERY = g('discovery');
  const NETWORKING = g('networking');
  const STORAGE = g('storage');
  const NODE = g('node');
  const ADMISSION = naming.groups.admissionregistration;
  const SYSTEM_NS = naming.namespaces.system;
  const PUBLIC_NS = naming.namespaces.public;
  const signer = (name: string): string => `${naming.keyDomain}/${name}`;
  const aggregateTo = (role: 'admin' | 'edit' | 'view'): string => `${RBAC}/aggregate-to-${role}`;

  /** Events, in the core group and the events group, as every controller records them. */
  const events = (): Rule => r(EVENT_WRITE, [CORE, naming.groups.events], 'events');

  const metadata = (name: string, namespace?: string, labels: Record<string, string> = {}) => ({
    name,
    ...(namespace !== undefined ? { namespace } : {}),
    labels: { [naming.labels.bootstrapping]: 'rbac-defaults', ...labels },
    annotations: { [naming.labels.rbacAutoupdate]: 'true' },
  });
  const apiVersion = `${RBAC}/v1`;

  const clusterRole = (name: string, rules: Rule[], labels?: Record<string, string>): ApiObject => ({
    apiVersion,
    kind: 'ClusterRole',
    metadata: metadata(name, undefined, labels),
    rules,
  });
  const aggregated = (name: string, from: 'admin' | 'edit' | 'view', labels?: Record<string, string>): ApiObject => ({
    apiVersion,
    kind: 'ClusterRole',
    metadata: metadata(name, undefined, labels),
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateTo(from)]: 'true' } }] },
    rules: null,
  });
  const role = (namespace: string, name: string, rules: Rule[]): ApiObject => ({
    apiVersion,
    kind: 'Role',
    metadata: metadata(name, namespace),
    rules,
  });

  const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC, name });
  const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC, name });
  const sa = (name: string, namespace = SYSTEM_NS): Subject => ({ kind: 'ServiceAccount', name, namespace });

  const clusterBinding = (name: string, subjects: Subject[] | undefined, roleName = name): ApiObject => ({
    apiVersion,
    kind: 'ClusterRoleBinding',
    metadata: metadata(name),
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: roleName },
    ...(subjects ? { subjects } : {}),
  });
  const binding = (namespace: string, name: string, subjects: Subject[], roleName = name): ApiObject => ({
    apiVersion,
    kind: 'RoleBinding',
    metadata: metadata(name, namespace),
    roleRef: { apiGroup: RBAC, kind: 'Role', name: roleName },
    subjects,
  });

  const csrRole = `system:${CERTS}:certificatesigningrequests`;
  const approver = (signerName: string): Rule[] => [r('approve', CERTS, 'signers', [signer(signerName)])];

  // ---- The policy roles (upstream's ClusterRoles()), in upstream's order (by name).
  const policyRoles: ApiObject[] = [
    aggregated('admin', 'admin'),
    clusterRole('cluster-admin', [r('*', ANY, '*'), urls('*', '*')]),
    aggregated('edit', 'edit', { [aggregateTo('admin')]: 'true' }),
    clusterRole('system:aggregate-to-admin', [r('create', AUTHZ, 'localsubjectaccessreviews'), r(READ_WRITE, RBAC, 'rolebindings roles')], {
      [aggregateTo('admin')]: 'true',
    }),
    clusterRole(
      'system:aggregate-to-edit',
      [
        r(READ, CORE, 'pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy'),
        r('impersonate', CORE, 'serviceaccounts'),
        r(WRITE, CORE, 'pods pods/attach pods/exec pods/portforward pods/proxy'),
        r('create', CORE, 'pods/eviction'),
        r(
          WRITE,
          CORE,
          'configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy',
        ),
        r('create', CORE, 'serviceaccounts/token'),
        r(WRITE, APPS, 'daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale'),
        r(WRITE, AUTOSCALING, 'horizontalpodautoscalers'),
        r(WRITE, BATCH, 'cronjobs jobs'),
        r(
          WRITE,
          EXT,
          'daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale',
        ),
        r(WRITE, POLICY, 'poddisruptionbudgets'),
        r(WRITE, NETWORKING, 'ingresses networkpolicies'),
        r(READ_WRITE, COORD, 'leases'),
      ],
      { [aggregateTo('edit')]: 'true' },
    ),
    clusterRole(
      'system:aggregate-to-view',
      [
        r(
          READ,
          CORE,
          'configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status',
        ),
        r(READ, CORE, 'bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status'),
        r(READ, CORE, 'namespaces'),
        r(READ, DISCOVERY, 'endpointslices'),
        r(
          READ,
          APPS,
          'controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status',
        ),
        r(READ, AUTOSCALING, 'horizontalpodautoscalers horizontalpodautoscalers/status'),
        r(READ, BATCH, 'cronjobs cronjobs/status jobs jobs/status'),
        r(
          READ,
          EXT,
          'daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale',
        ),
        r(READ, POLICY, 'poddisruptionbudgets poddisruptionbudgets/status'),
        r(READ, NETWORKING, 'ingresses ingresses/status networkpolicies'),
      ],
      { [aggregateTo('view')]: 'true' },
    ),
    clusterRole('system:auth-delegator', [r('create', AUTHN, 'tokenreviews'), r('create', AUTHZ, 'subjectaccessreviews')]),
    clusterRole('system:basic-user', [r('create', AUTHZ, 'selfsubjectaccessreviews selfsubjectrulesreviews'), r('create', AUTHN, 'selfsubjectreviews')]),
    clusterRole(`${csrRole}:nodeclient`, [r('create', CERTS, 'certificatesigningrequests/nodeclient')]),
    clusterRole(`${csrRole}:selfnodeclient`, [r('create', CERTS, 'certificatesigningrequests/selfnodeclient')]),
    clusterRole(`system:${CERTS}:kube-apiserver-client-approver`, approver('kube-apiserver-client')),
    clusterRole(`system:${CERTS}:kube-apiserver-client-kubelet-approver`, approver('kube-apiserver-client-kubelet')),
    clusterRole(`system:${CERTS}:kubelet-serving-approver`, approver('kubelet-serving')),
    clusterRole(`system:${CERTS}:legacy-unknown-approver`, approver('legacy-unknown')),
    clusterRole('system:discovery', [urls('get', '/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/')]),
    clusterRole('system:heapster', [r(READ, CORE, 'events namespaces nodes pods'), r(READ, EXT, 'deployments')]),
    clusterRole('system:kube-aggregator', [r(READ, CORE, 'endpoints services')]),
    clusterRole('system:kube-controller-manager', [
      events(),
      r('create', COORD, 'leases'),
      r('get update', COORD, 'leases', naming.leaderLeases.controllerManager),
      r('create', CORE, 'secrets serviceaccounts'),
      r('delete', CORE, 'secrets'),
      r('get', CORE, 'configmaps namespaces secrets serviceaccounts'),
      r('update', CORE, 'secrets serviceaccounts'),
      r('create', AUTHN, 'tokenreviews'),
      r('create', AUTHZ, 'subjectaccessreviews'),
      r('list watch', ANY, '*'),
      r('create', CORE, 'serviceaccounts/token'),
    ]),
    clusterRole('system:kube-dns', [r('list watch', CORE, 'endpoints services')]),
    clusterRole('system:kube-scheduler', [
      events(),
      r('create', COORD, 'leases'),
      r('get update', COORD, 'leases', naming.leaderLeases.scheduler),
      r(READ, CORE, 'nodes'),
      r('delete get list watch', CORE, 'pods'),
      r('create', CORE, 'bindings pods/binding'),
      r('patch update', CORE, 'pods/status'),
      r(READ, CORE, 'replicationcontrollers services'),
      r(READ, [APPS, EXT], 'replicasets'),
      r(READ, APPS, 'statefulsets'),
      r(READ, POLICY, 'poddisruptionbudgets'),
      r(READ, CORE, 'persistentvolumeclaims persistentvolumes'),
      r('create', AUTHN, 'tokenreviews'),
      r('create', AUTHZ, 'subjectaccessreviews'),
      r(READ, STORAGE, 'csinodes'),
      r(READ, CORE, 'namespaces'),
      r(READ, STORAGE, 'csidrivers'),
      r(READ, STORAGE, 'csistoragecapacities'),
    ]),
    clusterRole('system:kubelet-api-admin', [
      r(READ, CORE, 'nodes'),
      r('proxy', CORE, 'nodes'),
      r('*', CORE, 'nodes/log nodes/metrics nodes/proxy nodes/stats'),
    ]),
    clusterRole('system:monitoring', [urls('get', '/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*')]),
    clusterRole('system:node', [
      r('create', AUTHN, 'tokenreviews'),
      r('create', AUTHZ, 'localsubjectaccessreviews subjectaccessreviews'),
      r(READ, CORE, 'services'),
      r('create get list watch', CORE, 'nodes'),
      r('patch update', CORE, 'nodes/status'),
      r('patch update', CORE, 'nodes'),
      r(EVENT_WRITE, CORE, 'events'),
      r(READ, CORE, 'pods'),
      r('create delete', CORE, 'pods'),
      r('patch update', CORE, 'pods/status'),
      r('create', CORE, 'pods/eviction'),
      r(READ, CORE, 'configmaps secrets'),
      r('get', CORE, 'persistentvolumeclaims persistentvolumes'),
      r('get', CORE, 'endpoints'),
      r('create get list watch', CERTS, 'certificatesigningrequests'),
      r('create delete get patch update', COORD, 'leases'),
      r('get', STORAGE, 'volumeattachments'),
      r('create', CORE, 'serviceaccounts/token'),
      r('get patch update', CORE, 'persistentvolumeclaims/status'),
      r(READ, STORAGE, 'csidrivers'),
      r('create delete get patch update', STORAGE, 'csinodes'),
      r(READ, NODE, 'runtimeclasses'),
    ]),
    clusterRole('system:node-bootstrapper', [r('create get list watch', CERTS, 'certificatesigningrequests')]),
    clusterRole('system:node-problem-detector', [r('get', CORE, 'nodes'), r('patch', CORE, 'nodes/status'), events()]),
    clusterRole('system:node-proxier', [
      r('list watch', CORE, 'endpoints services'),
      r(READ, CORE, 'nodes'),
      events(),
      r('list watch', DISCOVERY, 'endpointslices'),
    ]),
    clusterRole('system:persistent-volume-provisioner', [
      r('create delete get list watch', CORE, 'persistentvolumes'),
      r('get list update watch', CORE, 'persistentvolumeclaims'),
      r(READ, STORAGE, 'storageclasses'),
      r('watch', CORE, 'events'),
      events(),
    ]),
    clusterRole('system:public-info-viewer', [urls('get', '/healthz /livez /readyz /version /version/')]),
    clusterRole('system:service-account-issuer-discovery', [urls('get', '/.well-known/openid-configuration /openid/v1/jwks')]),
    clusterRole('system:volume-scheduler', [
      r('get list patch update watch', CORE, 'persistentvolumes'),
      r(READ, STORAGE, 'storageclasses'),
      r('get list patch update watch', CORE, 'persistentvolumeclaims'),
    ]),
    aggregated('view', 'view', { [aggregateTo('edit')]: 'true' }),
  ];

  // ---- The controller manager's controllers (upstream's ControllerRoles()): each controller's
  // role is `system:controller:<name>`, bound to the service account `<name>` in the system namespace.
  const controllers: Array<[string, Rule[]]> = [
    [
      'attachdetach-controller',
      [
        r('list watch', CORE, 'persistentvolumeclaims persistentvolumes'),
        r(READ, CORE, 'nodes'),
        r('patch update', CORE, 'nodes/status'),
        r('list watch', CORE, 'pods'),
        events(),
        r('create delete get list watch', STORAGE, 'volumeattachments'),
        r(READ, STORAGE, 'csidrivers'),
        r(READ, STORAGE, 'csinodes'),
      ],
    ],
    [
      'certificate-controller',
      [
        r('delete get list watch', CERTS, 'certificatesigningrequests'),
        r('update', CERTS, 'certificatesigningrequests/approval certificatesigningrequests/status'),
        r('approve', CERTS, 'signers', [signer('kube-apiserver-client-kubelet')]),
        r('sign', CERTS, 'signers', ['kube-apiserver-client', 'kube-apiserver-client-kubelet', 'kubelet-serving', 'legacy-unknown'].map(signer)),
        r('create', AUTHZ, 'subjectaccessreviews'),
        events(),
      ],
    ],
    ['clusterrole-aggregation-controller', [r('escalate get list patch update watch', RBAC, 'clusterroles')]],
    [
      'cronjob-controller',
      [
        r('get list update watch', BATCH, 'cronjobs'),
        r(CRUD, BATCH, 'jobs'),
        r('update', BATCH, 'cronjobs/status'),
        r('update', BATCH, 'cronjobs/finalizers'),
        r('delete list watch', CORE, 'pods'),
        events(),
      ],
    ],
    [
      'daemon-set-controller',
      [
        r(READ, [APPS, EXT], 'daemonsets'),
        r('update', [APPS, EXT], 'daemonsets/status'),
        r('update', [APPS, EXT], 'daemonsets/finalizers'),
        r('list watch', CORE, 'nodes'),
        r('create delete list patch watch', CORE, 'pods'),
        r('create', CORE, 'pods/binding'),
        r(CRUD, APPS, 'controllerrevisions'),
        events(),
      ],
    ],
    [
      'deployment-controller',
      [
        r('get list update watch', [APPS, EXT], 'deployments'),
        r('update', [APPS, EXT], 'deployments/status'),
        r('update', [APPS, EXT], 'deployments/finalizers'),
        r(CRUD, [APPS, EXT], 'replicasets'),
        r('get list update watch', CORE, 'pods'),
        events(),
      ],
    ],
    [
      'disruption-controller',
      [
        r(READ, [APPS, EXT], 'deployments'),
        r(READ, [APPS, EXT], 'replicasets'),
        r(READ, CORE, 'replicationcontrollers'),
        r(READ, POLICY, 'poddisruptionbudgets'),
        r(READ, APPS, 'statefulsets'),
        r('update', POLICY, 'poddisruptionbudgets/status'),
        r('patch update', CORE, 'pods/status'),
        r('get', ANY, '*/scale'),
        events(),
      ],
    ],
    [
      'endpoint-controller',
      [r(READ, CORE, 'pods services'), r('create delete get list update watch', CORE, 'endpoints'), r('create', CORE, 'endpoints/restricted'), events()],
    ],
    [
      'endpointslice-controller',
      [
        r(READ, CORE, 'nodes pods services'),
        r('update', CORE, 'services/finalizers'),
        r('create delete get list update watch', DISCOVERY, 'endpointslices'),
        events(),
      ],
    ],
    [
      'endpointslicemirroring-controller',
      [
        r(READ, CORE, 'endpoints services'),
        r('update', CORE, 'services/finalizers'),
        r('update', CORE, 'endpoints/finalizers'),
        r('create delete get list update watch', DISCOVERY, 'endpointslices'),
        events(),
      ],
    ],
    [
      'ephemeral-volume-controller',
      [r(READ, CORE, 'pods'), r('update', CORE, 'pods/finalizers'), r('create get list watch', CORE, 'persistentvolumeclaims'), events()],
    ],
    [
      'expand-controller',
      [
        r('get list patch update watch', CORE, 'persistentvolumes'),
        r('patch update', CORE, 'persistentvolumeclaims/status'),
        r(READ, CORE, 'persistentvolumeclaims'),
        events(),
      ],
    ],
    ['generic-garbage-collector', [r('delete get list patch update watch', ANY, '*'), events()]],
    [
      'horizontal-pod-autoscaler',
      [
        r(READ, AUTOSCALING, 'horizontalpodautoscalers'),
        r('update', AUTOSCALING, 'horizontalpodautoscalers/status'),
        r('get update', ANY, '*/scale'),
        r('list watch', CORE, 'pods'),
        r('list watch', g('metrics'), 'pods'),
        r(READ, g('custom.metrics'), '*'),
        r(READ, g('external.metrics'), '*'),
        events(),
      ],
    ],
    [
      'job-controller',
      [
        r('get list patch update watch', BATCH, 'jobs'),
        r('update', BATCH, 'jobs/status'),
        r('update', BATCH, 'jobs/finalizers'),
        r('create delete list patch watch', CORE, 'pods'),
        events(),
      ],
    ],
    [
      'legacy-service-account-token-cleaner',
      [r('get', CORE, 'configmaps', 'kube-apiserver-legacy-service-account-token-tracking'), r('delete patch', CORE, 'secrets')],
    ],
    [
      'namespace-controller',
      [
        r('delete get list watch', CORE, 'namespaces'),
        r('update', CORE, 'namespaces/finalize namespaces/status'),
        r('delete deletecollection get list watch', ANY, '*'),
      ],
    ],
    [
      'node-controller',
      [
        r('delete get list patch update watch', CORE, 'nodes'),
        r('patch update', CORE, 'nodes/status'),
        r('patch update', CORE, 'pods/status'),
        r('delete get list watch', CORE, 'pods'),
        events(),
      ],
    ],
    [
      'persistent-volume-binder',
      [
        r('create delete get list update watch', CORE, 'persistentvolumes'),
        r('update', CORE, 'persistentvolumes/status'),
        r('get list update watch', CORE, 'persistentvolumeclaims'),
        r('update', CORE, 'persistentvolumeclaims/status'),
        r('create delete get list watch', CORE, 'pods'),
        r(READ, STORAGE, 'storageclasses'),
        r('list watch', CORE, 'nodes'),
        events(),
        r('watch', CORE, 'events'),
      ],
    ],
    ['pod-garbage-collector', [r('delete list watch', CORE, 'pods'), r(READ, CORE, 'nodes'), r('patch', CORE, 'pods/status')]],
    ['pv-protection-controller', [r('get list update watch', CORE, 'persistentvolumes'), events()]],
    [
      'pvc-protection-controller',
      [r('get list update watch', CORE, 'persistentvolumeclaims'), r('update', CORE, 'persistentvolumeclaims/status'), r(READ, CORE, 'pods'), events()],
    ],
    [
      'replicaset-controller',
      [
        r('get list update watch', [APPS, EXT], 'replicasets'),
        r('update', [APPS, EXT], 'replicasets/status'),
        r('update', [APPS, EXT], 'replicasets/finalizers'),
        r('create delete list patch watch', CORE, 'pods'),
        events(),
      ],
    ],
    [
      'replication-controller',
      [
        r('get list update watch', CORE, 'replicationcontrollers'),
        r('update', CORE, 'replicationcontrollers/status'),
        r('update', CORE, 'replicationcontrollers/finalizers'),
        r('create delete list patch watch', CORE, 'pods'),
        events(),
      ],
    ],
    ['resourcequota-controller', [r('list watch', ANY, '*'), r('update', CORE, 'resourcequotas/status'), events()]],
    ['root-ca-cert-publisher', [r('create update', CORE, 'configmaps'), events()]],
    ['route-controller', [r('list watch', CORE, 'nodes'), r('patch', CORE, 'nodes/status'), events()]],
    ['service-account-controller', [r('create', CORE, 'serviceaccounts'), events()]],
    ['service-controller', [r(READ, CORE, 'services'), r('patch update', CORE, 'services/status'), r('list watch', CORE, 'nodes'), events()]],
    [
      'statefulset-controller',
      [
        r('list watch', CORE, 'pods'),
        r(READ, APPS, 'statefulsets'),
        r('update', APPS, 'statefulsets/status'),
        r('update', APPS, 'statefulsets/finalizers'),
        r('create delete get patch update', CORE, 'pods'),
        r(CRUD, APPS, 'controllerrevisions'),
        r('create get list watch', CORE, 'persistentvolumeclaims'),
        r('delete update', CORE, 'persistentvolumeclaims'),
        r('update', CORE, 'pods/finalizers'),
        events(),
      ],
    ],
    ['ttl-after-finished-controller', [r('delete get list watch', BATCH, 'jobs'), events()]],
    ['ttl-controller', [r('list patch update watch', CORE, 'nodes'), events()]],
    [
      'validatingadmissionpolicy-status-controller',
      [r(READ, ADMISSION, 'validatingadmissionpolicies'), r('get patch update', ADMISSION, 'validatingadmissionpolicies/status'), events()],
    ],
  ];
  const controllerRoles = controllers.map(([name, rules]) => clusterRole(`system:controller:${name}`, rules));
  const controllerBindings = controllers.map(([name]) => clusterBinding(`system:controller:${name}`, [sa(name)]));

  // ---- The policy bindings (upstream's ClusterRoleBindings()), by name.
  const policyBindings: ApiObject[] = [
    clusterBinding('cluster-admin', [group('system:masters')]),
    clusterBinding('system:basic-user', [group('system:authenticated')]),
    clusterBinding('system:discovery', [group('system:authenticated')]),
    clusterBinding('system:kube-controller-manager', [user('system:kube-controller-manager')]),
    clusterBinding('system:kube-dns', [sa('kube-dns')]),
    clusterBinding('system:kube-scheduler', [user('system:kube-scheduler')]),
    clusterBinding('system:monitoring', [group('system:monitoring')]),
    // Kept with no subjects since the Node authorizer took over (reconciliation adds none).
    clusterBinding('system:node', undefined),
    clusterBinding('system:node-proxier', [user('system:kube-proxy')]),
    clusterBinding('system:public-info-viewer', [group('system:authenticated'), group('system:unauthenticated')]),
    clusterBinding('system:service-account-issuer-discovery', [group('system:serviceaccounts')]),
    clusterBinding('system:volume-scheduler', [user('system:kube-scheduler')]),
  ];

  // ---- Namespaced roles and bindings (upstream's NamespaceRoles() / NamespaceRoleBindings()).
  const leaderLocking = (): Rule[] => [r('create get list update watch', COORD, 'leases'), r('create get list update watch', COORD, 'leasecandidates')];
  const roles: ApiObject[] = [
    role(PUBLIC_NS, 'system:controller:bootstrap-signer', [r(READ, CORE, 'configmaps'), r('update', CORE, 'configmaps', 'cluster-info'), events()]),
    role(SYSTEM_NS, 'extension-apiserver-authentication-reader', [r(READ, CORE, 'configmaps', 'extension-apiserver-authentication')]),
    role(SYSTEM_NS, 'system::leader-locking-kube-controller-manager', leaderLocking()),
    role(SYSTEM_NS, 'system::leader-locking-kube-scheduler', leaderLocking()),
    role(SYSTEM_NS, 'system:controller:bootstrap-signer', [r(READ, CORE, 'secrets')]),
    role(SYSTEM_NS, 'system:controller:cloud-provider', [r('create get list watch', CORE, 'configmaps')]),
    role(SYSTEM_NS, 'system:controller:token-cleaner', [r('delete get list watch', CORE, 'secrets'), events()]),
  ];
  const roleBindings: ApiObject[] = [
    binding(PUBLIC_NS, 'system:controller:bootstrap-signer', [sa('bootstrap-signer')]),
    binding(
      SYSTEM_NS,
      'system::extension-apiserver-authentication-reader',
      [user('system:kube-controller-manager'), user('system:kube-scheduler')],
      'extension-apiserver-authentication-reader',
    ),
    binding(SYSTEM_NS, 'system::leader-locking-kube-controller-manager', [
      user('system:kube-controller-manager'),
      sa('kube-controller-manager'),
      sa('leader-election-controller'),
    ]),
    binding(SYSTEM_NS, 'system::leader-locking-kube-scheduler', [user('system:kube-scheduler'), sa('kube-scheduler')]),
    binding(SYSTEM_NS, 'system:controller:bootstrap-signer', [sa('bootstrap-signer')]),
    binding(SYSTEM_NS, 'system:controller:cloud-provider', [sa('cloud-provider')]),
    binding(SYSTEM_NS, 'system:controller:token-cleaner', [sa('token-cleaner')]),
  ];

  // Every call builds new objects, none shared between roles: a caller may change what it is given.
  return {
    clusterRoles: [...policyRoles, ...controllerRoles],
    clusterRoleBindings: [...policyBindings, ...controllerBindings],
    roles,
    roleBindings,
  };
}
