/** Field-level validation shared by every resource type. */
export * from './field-errors';
export * from './names';
export * from './metadata';
export * from './selectors';
export * from './equality';
export * from './go-format';
export * from './schema';
