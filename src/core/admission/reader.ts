/**
 * How admission plugins read other objects (a service account, a namespace, a node): from the
 * watch cache first and, on a miss, the most recent state, as upstream's plugins fall back from
 * their informer to a live lookup so an object created a moment ago is found.
 */
import type { ApiObject } from '../api';
import { StatusError } from '../../status';

export interface ObjectLocation {
  group: string;
  version: string;
  resource: string;
  /** Unset for cluster-scoped objects. */
  namespace?: string;
  name: string;
}

export interface AdmissionReader {
  /** The object, or undefined when it does not exist (or its type is not served). */
  get(location: ObjectLocation): Promise<ApiObject | undefined>;
}

/** A reader over a getter that throws NotFound: cache first, then a live read. */
export function cachedThenLive(get: (location: ObjectLocation, live: boolean) => Promise<ApiObject>): AdmissionReader {
  const tryGet = async (location: ObjectLocation, live: boolean): Promise<ApiObject | undefined> => {
    try {
      return await get(location, live);
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) return undefined;
      throw err;
    }
  };
  return {
    async get(location) {
      return (await tryGet(location, false)) ?? (await tryGet(location, true));
    },
  };
}
