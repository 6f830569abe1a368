/**
 * How many seats a request takes, as upstream's WorkEstimator (`flowcontrol/request`):
 *
 * - a list costs one seat per 100 objects it reads: the type's stored count when served from the
 *   watch cache, the count plus its limit with a selector from the store, twice its limit
 *   otherwise; a list of one named object, or of a type whose count is unknown, one seat;
 * - a watch costs one seat, or, with `sendInitialEvents=true`, what a list from the cache would;
 * - a create, update, patch or delete takes one seat while it runs and, when ten or more watchers
 *   follow its type, `ceil(watchers / 10)` seats for 5 ms per seat after it, while they are
 *   notified (the same work reshaped to at most the level's widest);
 * - anything else one seat.
 *
 * Every estimate is 1 seat at least and at most the level's widest (10 at most).
 */
import type { WorkEstimate } from './queue-set';
import type { ListOptions } from '../core';
import type { FlowRequest } from './classify';

const MINIMUM_SEATS = 1;
const MAXIMUM_SEATS_LIMIT = 10;
const OBJECTS_PER_SEAT = 100;
const WATCHES_PER_SEAT = 10;
const EVENT_ADDITIONAL_DURATION_MS = 5;

/** What a list or watch asked for, as far as its cost goes. */
export interface ListHints {
  limit: number;
  hasSelector: boolean;
  /** Served from the store rather than the watch cache (an exact version, a continue token). */
  fromStorage: boolean;
  sendInitialEvents: boolean;
}

/** The list hints of a list or watch's options (upstream reads the same ones). */
export function listHintsOf(options: ListOptions): ListHints {
  const limit = options.limit !== undefined && Number.isFinite(options.limit) && options.limit > 0 ? Math.trunc(options.limit) : 0;
  const resourceVersion = options.resourceVersion ?? '';
  const match = options.resourceVersionMatch ?? '';
  return {
    limit,
    hasSelector: !!options.fieldSelector || !!options.labelSelector,
    // What the watch cache hands down to the store (docs/ARCHITECTURE.md, "Storage and watch cache").
    fromStorage: !!options.continue || match === 'Exact' || (limit > 0 && resourceVersion !== '' && resourceVersion !== '0' && match !== 'NotOlderThan'),
    sendInitialEvents: options.sendInitialEvents === true,
  };
}

/** The list hints of an HTTP query's parameters. */
export function listHintsOfQuery(query: URLSearchParams): ListHints {
  const limit = query.get('limit');
  const options: ListOptions = { sendInitialEvents: query.get('sendInitialEvents') === 'true' };
  if (limit) options.limit = Number(limit);
  for (const key of ['resourceVersion', 'continue', 'labelSelector', 'fieldSelector'] as const) {
    const value = query.get(key);
    if (value) options[key] = value;
  }
  const match = query.get('resourceVersionMatch');
  if (match) options.resourceVersionMatch = match as ListOptions['resourceVersionMatch'];
  return listHintsOf(options);
}

export interface EstimatorSources {
  /** The objects stored of a type (`resource` or `resource.group`), undefined when not known. */
  objectCount(group: string, resource: string): number | undefined;
  /** Watchers that a write of this request's type and namespace wakes. */
  watchCount(request: FlowRequest): number;
}

/** A list or watch without options. */
const NO_LIST_OPTIONS: ListHints = Object.freeze({ limit: 0, hasSelector: false, fromStorage: false, sendInitialEvents: false });

const MIN_ESTIMATE: WorkEstimate = Object.freeze({ initialSeats: MINIMUM_SEATS, finalSeats: 0, additionalLatencyMs: 0 });

/** The request's estimate at a level whose widest request is `levelMaxSeats` (0: the limit of 10). */
export function estimateWork(request: FlowRequest, hints: ListHints | undefined, levelMaxSeats: number, sources: EstimatorSources): WorkEstimate {
  const maxSeats = levelMaxSeats === 0 || levelMaxSeats > MAXIMUM_SEATS_LIMIT ? MAXIMUM_SEATS_LIMIT : levelMaxSeats;
  if (!request.isResourceRequest) return MIN_ESTIMATE;
  switch (request.verb) {
    case 'list':
    case 'watch':
      return listEstimate(request, hints, maxSeats, sources);
    case 'create':
    case 'update':
    case 'patch':
    case 'delete':
      return mutatingEstimate(request, maxSeats, sources);
    default:
      return MIN_ESTIMATE;
  }
}

function listEstimate(request: FlowRequest, hints: ListHints | undefined, maxSeats: number, sources: EstimatorSources): WorkEstimate {
  if (request.name !== '') return MIN_ESTIMATE;
  hints ??= NO_LIST_OPTIONS;
  if (request.verb === 'watch' && !hints.sendInitialEvents) return MIN_ESTIMATE;
  const stored = sources.objectCount(request.apiGroup, request.resource);
  if (stored === undefined) return MIN_ESTIMATE;
  const limit = hints.limit > 0 && hints.limit < stored ? hints.limit : stored;
  const fromCache = request.verb === 'watch' || !hints.fromStorage;
  const processed = fromCache ? stored : hints.hasSelector ? stored + limit : 2 * limit;
  const seats = Math.min(maxSeats, Math.max(MINIMUM_SEATS, Math.ceil(processed / OBJECTS_PER_SEAT)));
  return seats === MINIMUM_SEATS ? MIN_ESTIMATE : { initialSeats: seats, finalSeats: 0, additionalLatencyMs: 0 };
}

function mutatingEstimate(request: FlowRequest, maxSeats: number, sources: EstimatorSources): WorkEstimate {
  // A TokenRequest makes no event, whoever watches service accounts.
  if (request.resource === 'serviceaccounts' && request.subresource === 'token') return MIN_ESTIMATE;
  const watchers = sources.watchCount(request);
  if (watchers < WATCHES_PER_SEAT) return MIN_ESTIMATE;
  const wanted = Math.ceil(watchers / WATCHES_PER_SEAT);
  const finalSeats = Math.min(wanted, maxSeats);
  // The work (seats × 5 ms) kept, reshaped to the narrower width.
  const additionalLatencyMs = (wanted * EVENT_ADDITIONAL_DURATION_MS) / finalSeats;
  return { initialSeats: MINIMUM_SEATS, finalSeats, additionalLatencyMs };
}

/**
 * The watches open per type and namespace, as upstream's WatchTracker counts them: a write is
 * heard by the watches of its namespace and those across all namespaces.
 */
export class WatchTracker {
  private readonly counts = new Map<string, number>();

  /** A watch opened; the function returned forgets it. */
  register(request: FlowRequest): () => void {
    const key = keyOf(request.apiGroup, request.resource, request.namespace);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    let forgotten = false;
    return () => {
      if (forgotten) return;
      forgotten = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }

  count(request: FlowRequest): number {
    const all = this.counts.get(keyOf(request.apiGroup, request.resource, '')) ?? 0;
    if (request.namespace === '') return all;
    return all + (this.counts.get(keyOf(request.apiGroup, request.resource, request.namespace)) ?? 0);
  }
}

function keyOf(group: string, resource: string, namespace: string): string {
  return `${group}\u0000${resource}\u0000${namespace}`;
}
