/**
 * authentication/v1 TokenReview and SelfSubjectReview, authorization/v1 SubjectAccessReview,
 * SelfSubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview: never stored, created to ask a question
 * (is this token valid? who am I? may they do this?), as upstream serves them. The answers come from handlers the
 * server gives the core (core/handlers.ts); the schema and discovery facts live here.
 */
import type { Naming } from '../../naming';
import { defineTyped } from './common';
import type { DefineResource, ResourceDefinition } from './definition';

/** A review kind: create only, never stored (cluster-scoped unless `namespaced`). */
function review(naming: Naming, kind: string, singular: string, group = naming.groups.authentication, namespaced = false): ResourceDefinition {
  return defineTyped({
    group,
    version: 'v1',
    kind,
    resource: `${singular}s`,
    singular,
    namespaced,
    verbs: ['create'],
    notStored: true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  });
}

export const defineTokenReviews: DefineResource = (naming) => review(naming, 'TokenReview', 'tokenreview');

export const defineSelfSubjectReviews: DefineResource = (naming) => review(naming, 'SelfSubjectReview', 'selfsubjectreview');

/** authorization/v1: may a user (or I) do this? Answered by the server's authorizers. */
export const defineSubjectAccessReviews: DefineResource = (naming) => review(naming, 'SubjectAccessReview', 'subjectaccessreview', naming.groups.authorization);
export const defineSelfSubjectAccessReviews: DefineResource = (naming) =>
  review(naming, 'SelfSubjectAccessReview', 'selfsubjectaccessreview', naming.groups.authorization);
export const defineSelfSubjectRulesReviews: DefineResource = (naming) =>
  review(naming, 'SelfSubjectRulesReview', 'selfsubjectrulesreview', naming.groups.authorization);
export const defineLocalSubjectAccessReviews: DefineResource = (naming) =>
  review(naming, 'LocalSubjectAccessReview', 'localsubjectaccessreview', naming.groups.authorization, true);
