/**
 * The admission chain's metrics, upstream's `apiserver_admission_step_admission_duration_seconds`
 * (each phase of the whole chain) and `apiserver_admission_controller_admission_duration_seconds`
 * (each plugin's phase), with upstream's labels (`type` admit or validate, `operation`,
 * `rejected`, and the plugin's `name`) and buckets; per-write series, so the fast histograms.
 * And each webhook call's `apiserver_admission_webhook_*`: its time, its requests by code,
 * refusals by kind of error, and calls let through by failurePolicy Ignore. And the
 * ValidatingAdmissionPolicy checks, `apiserver_validating_admission_policy_check_total` and
 * `_check_duration_seconds`: each failed validation by the action its binding took.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { AdmissionMetrics, AdmissionOperation, AdmissionStep } from '../core';
import { FastHistogram, type HistogramSeries } from '../metrics/series';

/** Upstream's admission latency buckets, 5 ms to 2.5 s; a webhook's reach 25 s. */
const BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5];
const WEBHOOK_BUCKETS = [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25];
/** Upstream's policy check buckets: half a microsecond to a second. */
const POLICY_BUCKETS = [0.0000005, 0.001, 0.01, 0.1, 1.0];

/** A plugin's (or the chain's) series: by phase, then operation, then [accepted, rejected]. */
type SeriesByPhase = Partial<Record<AdmissionStep, Partial<Record<AdmissionOperation, [HistogramSeries | undefined, HistogramSeries | undefined]>>>>;

export function admissionMetrics(registry: Registry): AdmissionMetrics {
  const registers = [registry];
  const step = new FastHistogram(
    'apiserver_admission_step_admission_duration_seconds',
    'Time in seconds each phase of the admission chain (admit or validate) took, by operation and whether it refused the write.',
    ['type', 'operation', 'rejected'],
    BUCKETS,
    registry,
  );
  const plugin = new FastHistogram(
    'apiserver_admission_controller_admission_duration_seconds',
    'Time in seconds one admission plugin took in one phase (admit or validate), by plugin, operation and whether it refused the write.',
    ['name', 'type', 'operation', 'rejected'],
    BUCKETS,
    registry,
  );
  // One series object per label set, found by plugin, phase, operation and outcome in turn: a
  // write reports every plugin's phases, and building a key string for each cost more than the
  // observation itself.
  const stepSeries: SeriesByPhase = {};
  const pluginSeries = new Map<string, SeriesByPhase>();
  const seriesOf = (name: string | undefined, type: AdmissionStep, operation: AdmissionOperation, rejected: boolean): HistogramSeries => {
    let byPhase = name === undefined ? stepSeries : pluginSeries.get(name);
    if (!byPhase) pluginSeries.set(name!, (byPhase = {}));
    const byOperation = (byPhase[type] ??= {});
    const outcomes = (byOperation[operation] ??= [undefined, undefined]);
    const at = rejected ? 1 : 0;
    let found = outcomes[at];
    if (!found) {
      const labels = { type, operation, rejected: String(rejected) };
      found = outcomes[at] = name === undefined ? step.labels(labels) : plugin.labels({ name, ...labels });
    }
    return found;
  };
  const webhookDuration = new Histogram({
    name: 'apiserver_admission_webhook_admission_duration_seconds',
    help: 'Time in seconds one admission webhook call took, by webhook, type (admit or validating), operation and whether the write was refused.',
    labelNames: ['name', 'type', 'operation', 'rejected'],
    buckets: WEBHOOK_BUCKETS,
    registers,
  });
  const webhookRequests = new Counter({
    name: 'apiserver_admission_webhook_request_total',
    help: 'Admission webhook calls, by webhook, type (admit or validating), operation, the status code the call ended with (at most 600) and whether the write was refused.',
    labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
    registers,
  });
  const webhookRejections = new Counter({
    name: 'apiserver_admission_webhook_rejection_count',
    help: "Writes refused by an admission webhook: by webhook, type, operation, error type (no_error for a refusal, calling_webhook_error for a failed call under failurePolicy Fail, apiserver_internal_error for the server's own) and the refusal's status code (at most 600).",
    labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
    registers,
  });
  const webhookFailOpen = new Counter({
    name: 'apiserver_admission_webhook_fail_open_count',
    help: 'Failed admission webhook calls the write went on past (failurePolicy Ignore), by webhook and type (admit or validating).',
    labelNames: ['name', 'type'],
    registers,
  });
  const policyChecks = new Counter({
    name: 'apiserver_validating_admission_policy_check_total',
    help: 'ValidatingAdmissionPolicy validations that failed, by policy, binding, error type (no_error, compile_error, invalid_error) and the action taken (deny, warn, audit, or allow for an error failurePolicy Ignore let through).',
    labelNames: ['policy', 'policy_binding', 'error_type', 'enforcement_action'],
    registers,
  });
  const policyDuration = new Histogram({
    name: 'apiserver_validating_admission_policy_check_duration_seconds',
    help: 'Time in seconds the ValidatingAdmissionPolicy validations counted in apiserver_validating_admission_policy_check_total took, with the same labels.',
    labelNames: ['policy', 'policy_binding', 'error_type', 'enforcement_action'],
    buckets: POLICY_BUCKETS,
    registers,
  });
  const bounded = (code: number) => String(Math.min(code, 600));
  return {
    step: (type, operation, rejected, seconds) => seriesOf(undefined, type, operation, rejected).observe(seconds),
    plugin: (name, type, operation, rejected, seconds) => seriesOf(name, type, operation, rejected).observe(seconds),
    webhook: (name, type, operation, rejected, seconds, code) => {
      webhookDuration.observe({ name, type, operation, rejected: String(rejected) }, seconds);
      webhookRequests.inc({ name, type, operation, code: bounded(code), rejected: String(rejected) });
    },
    webhookRejection: (name, type, operation, errorType, code) =>
      webhookRejections.inc({ name, type, operation, error_type: errorType, rejection_code: bounded(code) }),
    webhookFailOpen: (name, type) => webhookFailOpen.inc({ name, type }),
    policyCheck: (policy, binding, errorType, action, seconds) => {
      const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: action };
      policyChecks.inc(labels);
      policyDuration.observe(labels, seconds);
    },
  };
}
