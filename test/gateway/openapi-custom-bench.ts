/**
 * How long the OpenAPI documents take with many custom resources, over HTTP through the
 * gateway's node listener: N custom resource types (default 1,000, each its own group, a
 * 20-property schema, the status and scale subresources) next to the built-in types; the
 * documents are fetched once (cold), then after each of several CRD changes (one type added,
 * or one replaced by a new definition object) each of `/openapi/v2` (JSON, protobuf, and
 * protobuf gzipped as kubectl asks), `/openapi/v3` and the changed group version's v3
 * document is fetched and timed, client side, to the last byte.
 *
 *   node -r @swc-node/register test/gateway/openapi-custom-bench.ts [count] [changes]
 *
 * Prints figures; asserts nothing (timings are the machine's).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { builtinResources } from '../../src/core/resources';
import type { ResourceDefinition } from '../../src/core';
import { ResponseEnds, createNodeListener } from '../../src/gateway/express-adapter';
import { createOpenApiHandler } from '../../src/gateway/openapi';
import { ResourceIndex } from '../../src/gateway/resource-index';
import { createExchange } from '../../src/gateway/types';
import { createNaming } from '../../src/naming';

const count = Number(process.argv[2] ?? 1000);
const changes = Number(process.argv[3] ?? 5);
const naming = createNaming('kubernetes');

/** A custom resource type as the CRD machinery makes it: 20 properties, status and scale. */
export function customType(i: number, generation = 1): ResourceDefinition {
  const properties: Record<string, unknown> = {};
  for (let p = 0; p < 20; p++) {
    properties[`field${p}`] =
      p % 4 === 0
        ? { type: 'string', description: `Field ${p} of widget ${i}, generation ${generation}.`, maxLength: 64 }
        : p % 4 === 1
          ? { type: 'integer', minimum: 0, default: p }
          : p % 4 === 2
            ? { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' }
            : { type: 'object', properties: { name: { type: 'string' }, port: { 'x-kubernetes-int-or-string': true } } };
  }
  const served = {
    name: 'v1',
    served: true,
    storage: true,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        description: `Widget ${i}.`,
        properties: {
          spec: { type: 'object', properties },
          status: { type: 'object', properties: { replicas: { type: 'integer' } } },
        },
      },
    },
    subresources: { status: {}, scale: { specReplicasPath: '.spec.field1', statusReplicasPath: '.status.replicas' } },
  };
  return {
    group: `g${i}.example.com`,
    version: 'v1',
    kind: `Widget${i}`,
    resource: `widget${i}s`,
    singular: `widget${i}`,
    namespaced: true,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    custom: { crd: `widget${i}s.g${i}.example.com`, uid: `uid-${i}-${generation}`, listKind: `Widget${i}List`, served },
  };
}

interface Fetched {
  status: number;
  bytes: number;
  /** Time to the first byte of the answer, and to its last, as curl measures them. */
  firstByteMs: number;
  ms: number;
  /** CPU time this process (the server) spent meanwhile, curl's spawning included: what the answer cost, whatever else the machine runs. */
  cpuMs: number;
  /** The handler's synchronous part: the document found or put together, and its first write. */
  handlerMs: number;
  body: Buffer;
}

const run = promisify(execFile);
let bodyFile = '';
let lastHandlerMs = 0;

/** GET with curl, a process of its own (a client in this one would share the server's event loop). */
async function fetch(port: number, path: string, headers: Record<string, string> = {}, keepBody = false): Promise<Fetched> {
  const args = ['-s', '-o', bodyFile, '-w', '%{http_code} %{size_download} %{time_starttransfer} %{time_total}'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  const cpu = process.cpuUsage();
  const { stdout } = await run('curl', [...args, `http://127.0.0.1:${port}${path}`]);
  const used = process.cpuUsage(cpu);
  const [status, bytes, first, total] = stdout.trim().split(' ').map(Number);
  const cpuMs = (used.user + used.system) / 1000;
  return {
    status: status!,
    bytes: bytes!,
    firstByteMs: first! * 1000,
    ms: total! * 1000,
    cpuMs,
    handlerMs: lastHandlerMs,
    body: keepBody ? await readFile(bodyFile) : Buffer.alloc(0),
  };
}

const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

async function main(): Promise<void> {
  const builtins = builtinResources(naming);
  let custom = Array.from({ length: count }, (_, i) => customType(i));
  const index = new ResourceIndex([...builtins, ...custom]);
  const handler = createOpenApiHandler({ naming, index, serverVersion: 'v1.32.0' });
  // The handler's synchronous run: finding or putting together the document, up to its first
  // write (the rest goes out as the client reads).
  const server = http.createServer(
    createNodeListener((request, response) => {
      const start = process.hrtime.bigint();
      const done = handler(createExchange(request, response));
      lastHandlerMs = Number(process.hrtime.bigint() - start) / 1e6;
      return done;
    }, new ResponseEnds()),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-bench-'));
  bodyFile = path.join(dir, 'body');
  const row = (what: string, f: Fetched) =>
    console.log(
      `${what.padEnd(44)} handler ${f.handlerMs.toFixed(1).padStart(7)} ms, first byte ${f.firstByteMs.toFixed(1).padStart(7)} ms, last ${f.ms.toFixed(1).padStart(7)} ms, server CPU ${f.cpuMs.toFixed(1).padStart(7)} ms  ${(f.bytes / 1e6).toFixed(2).padStart(6)} MB  ${f.status}`,
    );
  console.log(`${count} custom resource types (20-property schemas, status and scale) + ${builtins.length} built-in types`);
  console.log('-- cold (every part built) --');
  row('GET /openapi/v2 (JSON)', await fetch(port, '/openapi/v2'));
  row('GET /openapi/v2 (protobuf)', await fetch(port, '/openapi/v2', { accept: PROTOBUF }));
  row('GET /openapi/v2 (protobuf, gzip)', await fetch(port, '/openapi/v2', { accept: PROTOBUF, 'accept-encoding': 'gzip' }));
  const coldIndex = await fetch(port, '/openapi/v3', {}, true);
  row('GET /openapi/v3', coldIndex);
  row('GET /openapi/v3/apis/g0.example.com/v1', await fetch(port, JSON.parse(coldIndex.body.toString()).paths['apis/g0.example.com/v1'].serverRelativeURL));

  const figures: Record<string, number[]> = {};
  for (let c = 0; c < changes; c++) {
    // Alternate: a new type (another CRD), or a changed one (its definition object replaced).
    let changed: number;
    if (c % 2 === 0) {
      changed = custom.length;
      custom = [...custom, customType(changed)];
    } else {
      changed = c * 7;
      custom = custom.map((d, i) => (i === changed ? customType(i, c + 1) : d));
    }
    index.replace([...builtins, ...custom]);
    const gv = `apis/g${changed}.example.com/v1`;
    const measured: [string, Fetched][] = [];
    measured.push(['GET /openapi/v2 (JSON)', await fetch(port, '/openapi/v2')]);
    const check = c === 0; // the gzip stream is checked against the document once
    measured.push(['GET /openapi/v2 (protobuf)', await fetch(port, '/openapi/v2', { accept: PROTOBUF }, check)]);
    measured.push(['GET /openapi/v2 (protobuf, gzip)', await fetch(port, '/openapi/v2', { accept: PROTOBUF, 'accept-encoding': 'gzip' }, check)]);
    const v3 = await fetch(port, '/openapi/v3', {}, true);
    measured.push(['GET /openapi/v3', v3]);
    const url = JSON.parse(v3.body.toString()).paths[gv].serverRelativeURL as string;
    measured.push([`GET /openapi/v3/<changed group version>`, await fetch(port, url)]);
    measured.push(['GET /openapi/v2 (JSON) again, unchanged', await fetch(port, '/openapi/v2')]);
    console.log(`-- change ${c + 1}: ${c % 2 === 0 ? 'added' : 'replaced'} ${gv} --`);
    for (const [what, f] of measured) {
      row(what, f);
      (figures[`${what}: handler`] ??= []).push(f.handlerMs);
      (figures[`${what}: first byte`] ??= []).push(f.firstByteMs);
      (figures[`${what}: last byte`] ??= []).push(f.ms);
      (figures[`${what}: server CPU`] ??= []).push(f.cpuMs);
    }
    // The gzip stream put together from pieces is the protobuf document.
    const [proto, zipped] = [measured[1]![1], measured[2]![1]];
    if (check && !gunzipSync(zipped.body).equals(proto.body)) throw new Error('the gzipped document is not the document');
  }
  console.log(`-- after ${changes} changes: median / max (load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs) --`);
  for (const [what, list] of Object.entries(figures)) {
    const sorted = [...list].sort((a, b) => a - b);
    console.log(`${what.padEnd(60)} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1).padStart(8)} / ${sorted[sorted.length - 1]!.toFixed(1)} ms`);
  }
  server.close();
  await rm(dir, { recursive: true, force: true });
}

if (require.main === module) void main();
