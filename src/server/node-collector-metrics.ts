/**
 * The node lifecycle controller's zone metrics, upstream's `node_collector_*` (names, labels and
 * help as kube-controller-manager exports them): per zone key, the registered nodes, the not
 * Ready ones, the share that is healthy, and the nodes tainted NoExecute since start.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ZoneMetrics } from '../controllers';

export function nodeCollectorMetrics(registry: Registry): ZoneMetrics {
  const registers = [registry];
  const size = new Gauge({ name: 'node_collector_zone_size', help: 'Gauge measuring number of registered Nodes per zones.', labelNames: ['zone'], registers });
  const unhealthy = new Gauge({
    name: 'node_collector_unhealthy_nodes_in_zone',
    help: 'Gauge measuring number of not Ready Nodes per zones.',
    labelNames: ['zone'],
    registers,
  });
  const health = new Gauge({
    name: 'node_collector_zone_health',
    help: 'Gauge measuring percentage of healthy nodes per zone.',
    labelNames: ['zone'],
    registers,
  });
  const evictions = new Counter({
    name: 'node_collector_evictions_total',
    help: 'Number of Node evictions that happened since current instance of NodeController started.',
    labelNames: ['zone'],
    registers,
  });
  return {
    zone(zone, nodes, notReady) {
      size.set({ zone }, nodes);
      unhealthy.set({ zone }, notReady);
      health.set({ zone }, nodes > 0 ? (100 * (nodes - notReady)) / nodes : 0);
    },
    forget(zone) {
      for (const g of [size, unhealthy, health]) g.remove({ zone });
    },
    evicted(zone) {
      evictions.inc({ zone });
    },
  };
}
