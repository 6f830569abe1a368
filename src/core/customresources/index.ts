export { CustomResourceController, type CustomResourceHost } from './controller';
export { customResourceTypes } from './definition';
export type { CustomResourceDefinitionObject } from './crd';
export { FollowedCatalog } from './follower';
