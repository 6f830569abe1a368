/**
 * The gRPC door's part of API Priority and Fairness (src/flowcontrol): each admitted call is
 * classified and given its seats by the same dispatcher as the HTTPS door, after
 * authentication and authorization as there. A refused call fails with the TooManyRequests
 * Status (RESOURCE_EXHAUSTED, its `retryAfterSeconds` in the details); a watch holds its seats
 * until it has started, and counts as a watcher of its type while it lasts.
 */
import type { ListOptions, ResourceTarget, UserInfo } from '../core';
import { type FlowControl, type FlowRequest, type Ticket, listHintsOf } from '../flowcontrol';
import { tooManyRequests } from '../status';

/** The seats of one call. */
export interface Seat {
  /** Give the seats back (once the answer is made, or a watch has started). */
  leave(): void;
  /** The call is over: a watch stops counting as a watcher of its type. */
  end(): void;
}

/** Admits calls through the dispatcher: a seat now, or once the call's turn comes. */
export type Gate = (verb: string, args: readonly unknown[], user: UserInfo, signal: AbortSignal) => Seat | Promise<Seat>;

export function createGate(flowControl: FlowControl, requestTimeoutMs: number): Gate {
  return (verb, args, user, signal) => {
    const target = args[0] as ResourceTarget;
    const request = flowRequestOf(verb, target, user);
    const listing = verb === 'list' || verb === 'watch';
    const admission = flowControl.admit(request, {
      ...(listing ? { list: listHintsOf((args[1] as ListOptions | undefined) ?? {}) } : {}),
      waitLimitMs: requestTimeoutMs > 0 ? requestTimeoutMs / 4 : 15_000,
      signal: () => signal,
    });
    switch (admission.outcome) {
      case 'execute':
        return seatOf(flowControl, admission.ticket, verb === 'watch' ? request : undefined);
      case 'reject':
        throw refusal(admission.retryAfterSeconds);
      case 'wait':
        return admission.decided.then((outcome) => {
          if (outcome === 'execute') return seatOf(flowControl, admission.ticket, verb === 'watch' ? request : undefined);
          throw refusal(flowControl.retryAfterSeconds(admission.classification.priorityLevel));
        });
    }
  };
}

function refusal(retryAfterSeconds: number) {
  return tooManyRequests('Too many requests, please try again later.', retryAfterSeconds);
}

function seatOf(flowControl: FlowControl, ticket: Ticket, watch: FlowRequest | undefined): Seat {
  const forget = watch ? flowControl.watches.register(watch) : undefined;
  let left = false;
  const leave = () => {
    if (left) return;
    left = true;
    flowControl.finish(ticket);
  };
  return {
    leave,
    end() {
      leave();
      forget?.();
    },
  };
}

function flowRequestOf(verb: string, target: ResourceTarget, user: UserInfo): FlowRequest {
  const group = target.group ?? '';
  const prefix = group ? `/apis/${group}/${target.version}` : `/api/${target.version}`;
  const namespace = target.namespace ?? '';
  const name = target.name ?? '';
  const subresource = target.subresource ?? '';
  let path = prefix;
  if (namespace) path += `/namespaces/${namespace}`;
  path += `/${target.resource}`;
  if (name) path += `/${name}`;
  if (subresource) path += `/${subresource}`;
  return { user, isResourceRequest: true, verb, path, apiGroup: group, apiVersion: target.version, resource: target.resource, subresource, namespace, name };
}
