/** AlwaysAdmit and AlwaysDeny: upstream's test plugins, off by default. */
import { forbidden } from '../../status';
import type { AdmissionPlugin } from './types';

export const alwaysAdmit: AdmissionPlugin = { name: 'AlwaysAdmit' };

export const alwaysDeny: AdmissionPlugin = {
  name: 'AlwaysDeny',
  admit(a) {
    throw forbidden({ group: a.group, resource: a.resource }, a.name, 'admission control is denying all modifications');
  },
};
