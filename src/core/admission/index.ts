export { Admission, type AdmissionAttributes, type AdmissionOperation, type AdmissionPlugin } from './types';
export { namespaceLifecycle, type NamespaceLifecycleOptions, type NamespaceReader } from './namespace-lifecycle';
