/**
 * The LIST parameter set (docs/API.md, "Endpoints") decoded into `ListOptions`, then checked
 * with the core's list-option rules (upstream's ValidateListOptions wording, answered as 400:
 * docs/API.md, "Reads and resourceVersion"), so a bad combination is refused before the core is
 * called.
 */
import { type ListOptions, type ResourceVersionMatch, validateListOptions } from '../../core';
import type { Naming } from '../../naming';
import { queryInt64, queryOptionalBool, queryString } from './query';

export interface ParsedListOptions {
  /** `watch` was set (a watch rather than a list). */
  watch: boolean;
  options: ListOptions;
}

/** Decode (400 on malformed integers) and validate (400) the LIST parameters. */
export function parseListOptions(query: URLSearchParams, naming: Naming): ParsedListOptions {
  const watch = queryOptionalBool(query, 'watch') ?? false;
  const limit = queryInt64(query, 'limit');
  const timeoutSeconds = queryInt64(query, 'timeoutSeconds');
  const allowWatchBookmarks = queryOptionalBool(query, 'allowWatchBookmarks');
  const sendInitialEvents = queryOptionalBool(query, 'sendInitialEvents');
  const raw = {
    resourceVersion: queryString(query, 'resourceVersion') ?? '',
    resourceVersionMatch: queryString(query, 'resourceVersionMatch') ?? '',
    continue: queryString(query, 'continue') ?? '',
  };

  const options: ListOptions = {};
  if (raw.resourceVersion) options.resourceVersion = raw.resourceVersion;
  if (raw.resourceVersionMatch) options.resourceVersionMatch = raw.resourceVersionMatch as ResourceVersionMatch;
  if (limit !== undefined && limit > 0) options.limit = limit;
  if (raw.continue) options.continue = raw.continue;
  const labelSelector = queryString(query, 'labelSelector');
  if (labelSelector) options.labelSelector = labelSelector;
  const fieldSelector = queryString(query, 'fieldSelector');
  if (fieldSelector) options.fieldSelector = fieldSelector;
  if (timeoutSeconds !== undefined) options.timeoutSeconds = timeoutSeconds;
  if (allowWatchBookmarks) options.allowWatchBookmarks = true;
  if (sendInitialEvents !== undefined) options.sendInitialEvents = sendInitialEvents;
  validateListOptions(options, watch, naming.groups.meta);
  return { watch, options };
}
