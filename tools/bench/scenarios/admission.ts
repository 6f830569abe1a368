/**
 * Scenario 12: the cost of dynamic admission on a write, in process on the in-memory embedded
 * store, 16 creates in flight: a plain ConfigMap create (the reference), the same create through
 * one no-op validating webhook (allowed, over HTTPS to a webhook in its own process, so its
 * CPU is not counted here), and through one ValidatingAdmissionPolicy with one CEL validation.
 * Each row gives the rate as a share of the plain create's and this process's CPU per create.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createCore, type Core, type RequestContext } from '../../../src/core';
import { ensurePki } from '../../../src/server/pki';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import type { Context } from '../context';
import { micros } from '../report';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const IN_FLIGHT = 16;

/** A no-op webhook in a child process: every review is allowed. Resolves with its port. */
function startNoopWebhook(cert: string, key: string): Promise<{ port: number; child: ChildProcess }> {
  const script = `
    const https = require('node:https');
    const server = https.createServer({ cert: process.env.CERT, key: process.env.KEY }, (req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
      });
    });
    server.keepAliveTimeout = 60000;
    server.listen(0, '127.0.0.1', () => process.stdout.write(String(server.address().port) + '\\n'));
    process.stdin.on('end', () => process.exit(0));
    process.stdin.resume();`;
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, CERT: cert, KEY: key }, stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.once('data', (d: Buffer) => resolve({ port: Number(d.toString().trim()), child }));
  });
}

let n = 0;

async function measure(core: Core, namespace: string, ms: number): Promise<{ rate: number; cpuUs: number }> {
  const create = () =>
    core.create(
      { group: '', version: 'v1', resource: 'configmaps', namespace },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${n++}` }, data: { k: 'v' } },
      {},
      admin,
    );
  const run = async (until: number) => {
    let done = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < until) {
          await create();
          done++;
        }
      }),
    );
    return done;
  };
  await run(performance.now() + Math.min(300, ms / 4));
  const cpu = process.cpuUsage();
  const start = performance.now();
  const done = await run(start + ms);
  const seconds = (performance.now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  return { rate: done / seconds, cpuUs: (used.user + used.system) / done };
}

export async function runAdmission(ctx: Context): Promise<void> {
  const naming = createNaming('kubernetes');
  const AR = naming.groups.admissionregistration;
  const pki = await ensurePki({ dataDir: await ctx.tmpDir('admission-pki') });
  const webhook = await startNoopWebhook(pki.servingCert, pki.servingKey);
  const core = createCore({ store: createStore({ kind: 'embedded', inMemory: true }), naming, compactionIntervalMs: 0 });
  const ms = ctx.options.quick ? 1500 : 5000;
  try {
    await core.ready();
    const ns = async (name: string) => {
      await core.create(
        { group: '', version: 'v1', resource: 'namespaces' },
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { bench: name } } },
        {},
        admin,
      );
    };
    await ns('plain');
    await ns('webhook');
    await ns('policy');
    const at = (resource: string) => ({ group: AR, version: 'v1', resource });
    const selector = (name: string) => ({ matchLabels: { bench: name } });
    const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
    await core.create(
      at('validatingwebhookconfigurations'),
      {
        apiVersion: `${AR}/v1`,
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'noop' },
        webhooks: [
          {
            name: 'noop.bench.keelson',
            clientConfig: { url: `https://127.0.0.1:${webhook.port}/validate`, caBundle: Buffer.from(pki.caCert).toString('base64') },
            rules,
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            namespaceSelector: selector('webhook'),
          },
        ],
      },
      {},
      admin,
    );
    await core.create(
      at('validatingadmissionpolicies'),
      {
        apiVersion: `${AR}/v1`,
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: 'small' },
        spec: {
          matchConstraints: { resourceRules: rules, namespaceSelector: selector('policy') },
          validations: [{ expression: 'object.data.size() <= 10', message: 'at most 10 keys' }],
        },
      },
      {},
      admin,
    );
    const { object } = await core.create(
      at('validatingadmissionpolicybindings'),
      {
        apiVersion: `${AR}/v1`,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'small' },
        spec: { policyName: 'small', validationActions: ['Deny'] },
      },
      {},
      admin,
    );
    if (!(await core.state!().admissionFresh(Number(object.metadata!.resourceVersion), 5000))) throw new Error('admission configuration not in effect');
    // Alternate the three so drift on a shared machine spreads over all of them.
    const results = {
      plain: [] as Array<{ rate: number; cpuUs: number }>,
      webhook: [] as Array<{ rate: number; cpuUs: number }>,
      policy: [] as Array<{ rate: number; cpuUs: number }>,
    };
    for (let round = 0; round < 2; round++) {
      for (const name of ['plain', 'webhook', 'policy'] as const) results[name].push(await measure(core, name, ms / 2));
    }
    const mean = (xs: Array<{ rate: number; cpuUs: number }>) => ({
      rate: xs.reduce((s, x) => s + x.rate, 0) / xs.length,
      cpuUs: xs.reduce((s, x) => s + x.cpuUs, 0) / xs.length,
    });
    const plain = mean(results.plain);
    const rows: Array<[string, { rate: number; cpuUs: number }]> = [
      ['plain ConfigMap create', plain],
      ['create through 1 no-op validating webhook (HTTPS, own process)', mean(results.webhook)],
      ['create through 1 ValidatingAdmissionPolicy (1 CEL validation)', mean(results.policy)],
    ];
    for (const [name, r] of rows) {
      const reference = name === rows[0]![0];
      ctx.rows.push({
        scenario: 12,
        name: `admission: ${name}, ${IN_FLIGHT} in flight`,
        keelson: `${Math.round(r.rate).toLocaleString('en-US')}/s`,
        reference: reference ? '(reference)' : `${Math.round(plain.rate).toLocaleString('en-US')}/s plain create`,
        ratio: reference ? '1.00×' : `${(r.rate / plain.rate).toFixed(2)}×`,
        cpu: micros(r.cpuUs),
        latency: '',
        note: 'in process, in-memory embedded store; ratio: rate as a share of the plain create; CPU µs per create of this process (the webhook runs in its own)',
      });
    }
  } finally {
    await core.close();
    webhook.child.stdin!.end();
  }
}
