/** Every package's definitions, in one list the registry compiles. */
import type { PackageDef } from '../types';
import { ADMISSIONREGISTRATION_V1 } from './admissionregistration-v1';
import { APIEXTENSIONS_V1 } from './apiextensions-v1';
import { APIREGISTRATION_V1 } from './apiregistration-v1';
import { APPS_V1 } from './apps-v1';
import { AUTHENTICATION_V1 } from './authentication-v1';
import { AUTHORIZATION_V1 } from './authorization-v1';
import { AUTOSCALING_V1 } from './autoscaling-v1';
import { CERTIFICATES_V1 } from './certificates-v1';
import { COORDINATION_V1 } from './coordination-v1';
import { DISCOVERY_V1 } from './discovery-v1';
import { CORE_V1_CONTAINER } from './core-v1-container';
import { CORE_V1_ENDPOINTS } from './core-v1-endpoints';
import { CORE_V1_NODE } from './core-v1-node';
import { CORE_V1_OBJECTS } from './core-v1-objects';
import { CORE_V1_POD } from './core-v1-pod';
import { CORE_V1_POD_STATUS } from './core-v1-pod-status';
import { CORE_V1_SCHEDULING } from './core-v1-scheduling';
import { CORE_V1_SERVICE } from './core-v1-service';
import { CORE_V1_VOLUME } from './core-v1-volume';
import { EVENTS_V1 } from './events-v1';
import { FLOWCONTROL_V1, FLOWCONTROL_V1BETA3 } from './flowcontrol-v1';
import { META_V1 } from './meta-v1';
import { META_V1_DISCOVERY } from './meta-v1-discovery';
import { RBAC_V1 } from './rbac-v1';
import { SCHEDULING_V1 } from './scheduling-v1';
import { POLICY_V1 } from './policy-v1';

export const ALL_PACKAGES: readonly PackageDef[] = [
  META_V1,
  META_V1_DISCOVERY,
  CORE_V1_OBJECTS,
  CORE_V1_POD,
  CORE_V1_POD_STATUS,
  CORE_V1_CONTAINER,
  CORE_V1_VOLUME,
  CORE_V1_SCHEDULING,
  CORE_V1_NODE,
  CORE_V1_ENDPOINTS,
  CORE_V1_SERVICE,
  APPS_V1,
  AUTOSCALING_V1,
  RBAC_V1,
  EVENTS_V1,
  COORDINATION_V1,
  SCHEDULING_V1,
  POLICY_V1,
  AUTHENTICATION_V1,
  AUTHORIZATION_V1,
  ADMISSIONREGISTRATION_V1,
  CERTIFICATES_V1,
  APIEXTENSIONS_V1,
  FLOWCONTROL_V1,
  FLOWCONTROL_V1BETA3,
  DISCOVERY_V1,
  APIREGISTRATION_V1,
];
