/**
 * authentication/v1 TokenReview and SelfSubjectReview: never stored, created to ask a question
 * (is this token valid? who am I?), as upstream serves them. The answers come from handlers the
 * server gives the core (core/handlers.ts); the schema and discovery facts live here.
 */
import type { Naming } from '../../naming';
import { defineTyped } from './common';
import type { DefineResource, ResourceDefinition } from './definition';

/** A cluster-scoped review kind of the authentication group: create only, never stored. */
function review(naming: Naming, kind: string, singular: string): ResourceDefinition {
  return defineTyped({
    group: naming.groups.authentication,
    version: 'v1',
    kind,
    resource: `${singular}s`,
    singular,
    namespaced: false,
    verbs: ['create'],
    notStored: true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  });
}

export const defineTokenReviews: DefineResource = (naming) => review(naming, 'TokenReview', 'tokenreview');

export const defineSelfSubjectReviews: DefineResource = (naming) => review(naming, 'SelfSubjectReview', 'selfsubjectreview');
