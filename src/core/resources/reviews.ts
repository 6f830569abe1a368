/**
 * authentication/v1 TokenReview and SelfSubjectReview: never stored, created to ask a question
 * (is this token valid? who am I?), as upstream serves them. The answers come from handlers the
 * server gives the core (core/handlers.ts); the schema and discovery facts live here.
 */
import { defineTyped } from './common';
import type { DefineResource } from './definition';

export const defineTokenReviews: DefineResource = (naming) =>
  defineTyped({
    group: naming.groups.authentication,
    version: 'v1',
    kind: 'TokenReview',
    resource: 'tokenreviews',
    singular: 'tokenreview',
    namespaced: false,
    verbs: ['create'],
    notStored: true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  });

export const defineSelfSubjectReviews: DefineResource = (naming) =>
  defineTyped({
    group: naming.groups.authentication,
    version: 'v1',
    kind: 'SelfSubjectReview',
    resource: 'selfsubjectreviews',
    singular: 'selfsubjectreview',
    namespaced: false,
    verbs: ['create'],
    notStored: true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
  });
