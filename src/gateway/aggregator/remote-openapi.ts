/**
 * The extension servers' OpenAPI, as upstream's OpenAPI aggregation controllers keep it: each
 * remote APIService's `/openapi/v2` cut to its group version (merged into this server's
 * document by gateway/openapi/remote.ts) and its v3 document `apis/<group>/<version>` (found
 * through its `/openapi/v3` index), downloaded as `system:aggregator` when the APIService
 * changes and then at most once a minute of the clock while it is Available. A failed download
 * keeps what the last good one brought (upstream's last-success cache); the parts go with their
 * APIService.
 */
import type { Clock } from '../../clock';
import type { APIService } from '../../core';
import { filterV2ByGroupVersion, type RemoteOpenApi, type RemoteV2Spec } from '../openapi';
import type { RemoteGroup } from './registrations';
import type { FetchedDocument } from './transport';

/** upstream's delay between successful downloads of a remote spec. */
export const OPENAPI_REFRESH_MS = 60_000;

interface Downloaded {
  /** The APIService's spec when it was downloaded: a changed spec downloads again at once. */
  spec: string;
  at: number;
  v2?: RemoteV2Spec;
  v3?: Buffer;
}

export class RemoteOpenApiParts implements RemoteOpenApi {
  private readonly parts = new Map<string, Downloaded>();
  private readonly running = new Map<string, Promise<void>>();
  private gen = 0;

  constructor(
    private readonly fetch: (apiService: APIService, path: string, accept: string) => Promise<FetchedDocument>,
    private readonly clock: Clock,
    /** The remote groups, in order: the v2 parts are merged in it. */
    private readonly groups: () => readonly RemoteGroup[],
    private readonly log?: (message: string) => void,
  ) {}

  generation(): number {
    return this.gen;
  }

  v2(): readonly RemoteV2Spec[] {
    const out: RemoteV2Spec[] = [];
    for (const group of this.groups()) {
      for (const apiService of group.versions) {
        const v2 = this.parts.get(apiService.metadata?.name ?? '')?.v2;
        if (v2) out.push(v2);
      }
    }
    return out;
  }

  v3(): ReadonlyMap<string, Buffer> {
    const out = new Map<string, Buffer>();
    for (const group of this.groups()) {
      for (const apiService of group.versions) {
        const v3 = this.parts.get(apiService.metadata?.name ?? '')?.v3;
        if (v3) out.set(`apis/${group.name}/${apiService.spec?.version ?? ''}`, v3);
      }
    }
    return out;
  }

  /** After an availability check: download again when the APIService changed or a minute passed. */
  refresh(apiService: APIService, available: boolean): void {
    const name = apiService.metadata?.name ?? '';
    const spec = JSON.stringify(apiService.spec ?? {});
    const had = this.parts.get(name);
    if (!available || this.running.has(name)) return;
    if (had && had.spec === spec && this.clock.now() - had.at < OPENAPI_REFRESH_MS) return;
    const run = this.download(apiService)
      .then((got) => {
        const kept = this.parts.get(name);
        // undefined: the download failed, and the last good part stays; null: the server has none.
        const v2 = got.v2 === undefined ? kept?.v2 : (got.v2 ?? undefined);
        const v3 = got.v3 === undefined ? kept?.v3 : (got.v3 ?? undefined);
        const next: Downloaded = { spec, at: this.clock.now(), ...(v2 ? { v2 } : {}), ...(v3 ? { v3 } : {}) };
        const changed = JSON.stringify(kept?.v2) !== JSON.stringify(next.v2) || !(kept?.v3 && next.v3 ? kept.v3.equals(next.v3) : kept?.v3 === next.v3);
        this.parts.set(name, next);
        if (changed) this.gen++;
      })
      .finally(() => this.running.delete(name));
    this.running.set(name, run);
  }

  /** Forget the parts of APIServices no longer remote. */
  forget(names: ReadonlySet<string>): void {
    for (const name of [...this.parts.keys()]) {
      if (names.has(name)) continue;
      this.parts.delete(name);
      this.gen++;
    }
  }

  async settled(): Promise<void> {
    while (this.running.size) await Promise.all(this.running.values());
  }

  private async download(apiService: APIService): Promise<{ v2: RemoteV2Spec | null | undefined; v3: Buffer | null | undefined }> {
    const name = apiService.metadata?.name ?? '';
    const group = apiService.spec?.group ?? '';
    const version = apiService.spec?.version ?? '';
    const failed = (what: string) => (err: unknown) => {
      this.log?.(`OpenAPI ${what} of APIService ${name}: ${(err as Error).message}`);
      return undefined;
    };
    const v2 = await this.fetch(apiService, '/openapi/v2', 'application/json')
      .then((doc) => {
        // A server without a v2 document (404) adds nothing, as upstream's downloader treats it.
        if (doc.status === 404) return { paths: {}, definitions: {} };
        if (doc.status !== 200) throw new Error(`/openapi/v2 answered ${doc.status}`);
        return filterV2ByGroupVersion(JSON.parse(doc.body.toString('utf8')), group, version);
      })
      .catch(failed('v2'));
    const v3 = await this.fetch(apiService, '/openapi/v3', 'application/json')
      .then(async (index) => {
        if (index.status === 404) return null;
        if (index.status !== 200) throw new Error(`/openapi/v3 answered ${index.status}`);
        const paths = (JSON.parse(index.body.toString('utf8')) as { paths?: Record<string, { serverRelativeURL?: string }> }).paths ?? {};
        const url = paths[`apis/${group}/${version}`]?.serverRelativeURL;
        if (!url) return null;
        const doc = await this.fetch(apiService, url, 'application/json');
        if (doc.status !== 200) throw new Error(`${url} answered ${doc.status}`);
        JSON.parse(doc.body.toString('utf8')); // served as it came, but only when it is JSON
        return doc.body;
      })
      .catch(failed('v3'));
    return { v2, v3 };
  }
}
