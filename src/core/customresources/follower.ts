/**
 * The served types as a gateway in front of a remote core sees them: the built-in ones, and
 * the custom resources of every established CustomResourceDefinition the core holds, followed
 * through the core's API (an informer on the definitions), so routes, discovery, OpenAPI and
 * negotiation know them as the core's own catalog does. The core's process serves them.
 */
import type { CoreApi, RequestContext } from '../api';
import type { Clock } from '../../clock';
import type { Naming } from '../../naming';
import { Informer } from '../informer';
import type { ResourceDefinition } from '../resources/definition';
import { type CustomResourceDefinitionObject, crdConditionTrue } from './crd';
import { customResourceTypes } from './definition';

/** The gateway reads the definitions as the API server itself would. */
const SYSTEM: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] }, userAgent: 'keelson-gateway' };

export class FollowedCatalog {
  resources: readonly ResourceDefinition[];
  generation = 0;
  private readonly listeners = new Set<() => void>();
  private readonly informer?: Informer;
  /** The types made from each definition, kept while the definition is the same version. */
  private readonly made = new Map<string, { version: string; defs: readonly ResourceDefinition[] }>();

  constructor(
    api: CoreApi,
    private readonly builtins: readonly ResourceDefinition[],
    private readonly naming: Naming,
    clock: Clock,
  ) {
    this.resources = builtins;
    const group = naming.groups.apiextensions;
    if (!builtins.some((d) => d.group === group && d.resource === 'customresourcedefinitions')) return;
    this.informer = new Informer(api, { group, version: 'v1', resource: 'customresourcedefinitions' }, SYSTEM, () => this.rebuild(), clock);
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    this.informer?.stop();
  }

  private rebuild(): void {
    const custom: ResourceDefinition[] = [];
    const seen = new Set<string>();
    for (const obj of this.informer!.inNamespace('')) {
      const crd = obj as CustomResourceDefinitionObject;
      const name = crd.metadata?.name ?? '';
      if (!crdConditionTrue(crd, 'Established')) continue;
      seen.add(name);
      const version = crd.metadata?.resourceVersion ?? '';
      let made = this.made.get(name);
      if (made?.version !== version) {
        const defs = customResourceTypes(crd, { naming: this.naming }).filter(
          (def) => !this.builtins.some((b) => b.group === def.group && b.version === def.version && (b.resource === def.resource || b.kind === def.kind)),
        );
        made = { version, defs };
        this.made.set(name, made);
      }
      custom.push(...made.defs);
    }
    for (const name of this.made.keys()) if (!seen.has(name)) this.made.delete(name);
    this.resources = [...this.builtins, ...custom];
    this.generation++;
    for (const listener of [...this.listeners]) listener();
  }
}
