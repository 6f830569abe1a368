export * from './label-selector';
export * from './field-selector';
