/**
 * A gateway over a real in-process core, socket-free (the bench's in-process scenarios, and
 * tests): no health checks, a fixed address and version. In the bench tree, not test/support,
 * so that `--rev` builds of older servers still find it.
 */
import type { Core } from '../../src/core';
import { type GatewayOptions, createGateway, keelsonVersion } from '../../src/gateway';
import type { Naming } from '../../src/naming';

export function gatewayOverCore(core: Core, naming: Naming, extra: Partial<GatewayOptions> = {}): ReturnType<typeof createGateway> {
  return createGateway({
    core,
    resources: core.resources,
    naming,
    version: keelsonVersion({ keelsonVersion: '0.1.0' }),
    serverAddress: () => '127.0.0.1:6443',
    health: { livez: [], readyz: [], healthz: [] },
    ...extra,
  });
}
