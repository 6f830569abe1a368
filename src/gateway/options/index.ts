export * from './query';
export * from './list-options';
export * from './write-options';
export * from './delete-options';
