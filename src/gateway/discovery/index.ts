export * from './legacy';
export * from './aggregated';
