/**
 * Smoke test against a running core's gRPC address: create, get, list, watch, update and
 * delete one ConfigMap, printing each step.
 *
 *   node -r @swc-node/register tools/grpc-smoke.ts 127.0.0.1:7443 [--namespace default]
 *       [--ca ca.pem] [--cert client.pem --key client-key.pem] [--server-name core.local]
 *
 * TLS is used when --ca, --cert or --server-name is given. The calls are made as
 * `grpc-smoke` in group `system:masters`: the gRPC door trusts the caller identity it is sent.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { RequestContext, ResourceTarget } from '../src/core/api';
import { createGrpcCoreClient, type GrpcClientTlsOptions } from '../src/grpc';
import { StatusError } from '../src/status';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      namespace: { type: 'string', default: 'default' },
      ca: { type: 'string' },
      cert: { type: 'string' },
      key: { type: 'string' },
      'server-name': { type: 'string' },
    },
  });
  const [address] = positionals;
  if (!address) {
    console.error('usage: grpc-smoke.ts <host:port> [--namespace ns] [--ca file] [--cert file --key file] [--server-name name]');
    process.exit(2);
  }
  let tls: GrpcClientTlsOptions | undefined;
  if (values.ca || values.cert || values['server-name']) {
    tls = {};
    if (values.ca) tls.ca = readFileSync(values.ca);
    if (values.cert) tls.cert = readFileSync(values.cert);
    if (values.key) tls.key = readFileSync(values.key);
    if (values['server-name']) tls.serverName = values['server-name'];
  }

  const client = createGrpcCoreClient(address, { tls });
  const namespace = values.namespace ?? 'default';
  const name = `grpc-smoke-${Date.now().toString(36)}`;
  const collection: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace };
  const one: ResourceTarget = { ...collection, name };
  const ctx: RequestContext = { user: { username: 'grpc-smoke', groups: ['system:masters'] }, userAgent: 'grpc-smoke', warnings: [] };

  try {
    const start = await client.list(collection, { limit: 1 }, ctx);
    const watch = await client.watch(collection, { resourceVersion: start.metadata.resourceVersion }, ctx);
    console.log(`watching configmaps in ${namespace} from resourceVersion ${start.metadata.resourceVersion}`);

    const created = await client.create(collection, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { step: 'created' } }, {}, ctx);
    console.log(`created ${name} at resourceVersion ${created.object.metadata?.resourceVersion}`);
    const got = await client.get(one, {}, ctx);
    console.log(`got ${name}: data=${JSON.stringify(got.data)}`);
    const list = await client.list(collection, {}, ctx);
    console.log(`listed ${list.items.length} configmaps at resourceVersion ${list.metadata.resourceVersion}`);
    await client.update(one, { ...got, data: { step: 'updated' } }, {}, ctx);
    console.log(`updated ${name}`);
    await client.delete(one, {}, ctx);
    console.log(`deleted ${name}`);

    let seen = 0;
    for await (const event of watch) {
      if (event.type === 'ERROR' || event.object.metadata?.name !== name) continue;
      console.log(`watch: ${event.type} ${name} at resourceVersion ${event.object.metadata?.resourceVersion}`);
      if (++seen === 3) break;
    }
    watch.close();
    for (const warning of ctx.warnings ?? []) console.log(`warning: ${warning}`);
    console.log('ok');
  } catch (err) {
    if (err instanceof StatusError) console.error(`failed: ${err.code} ${err.reason}: ${err.message}`);
    else console.error(err);
    process.exitCode = 1;
  } finally {
    client.close();
  }
}

void main();
