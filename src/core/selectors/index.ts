export * from './label-selector';
export * from './field-selector';
export * from './selection';
