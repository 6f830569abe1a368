export * from './api';
export { createCore, type Core, type CoreOptions } from './core';
export type { ResourceDefinition, Verb } from './resources/definition';
