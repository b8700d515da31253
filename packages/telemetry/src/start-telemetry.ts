import { context, diag, metrics, propagation, trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import type { IMetricReader } from '@opentelemetry/sdk-metrics';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { resetGatewayInstruments } from './gateway-metrics.js';
import { OtlpSpanProcessors, otlpMetricsUrl, otlpTracesUrl } from './otlp-span-processors.js';
import { RecordWhileExportingSampler } from './record-while-exporting-sampler.js';
import { SwitchableSpanProcessor } from './switchable-span-processor.js';

export interface TelemetryOptions {
  /** Becomes `service.name` of the process (first call) and the tracer's name (every call). */
  serviceName: string;
  /** OTLP/HTTP endpoint, e.g. `http://otel-collector:4318` (`/v1/traces` is appended). */
  otlpEndpoint?: string;
  /** Extra processors, e.g. a SimpleSpanProcessor over an InMemorySpanExporter in tests. */
  spanProcessors?: SpanProcessor[];
  /**
   * Serves the metrics in the Prometheus text format on this port (`/metrics`), apart from
   * the gateway's own port. Unset: no Prometheus endpoint. Only the first call of a process
   * sets up metrics (see `metricReaders`).
   */
  metricsPort?: number;
  /**
   * Extra metric readers, e.g. an in-memory reader in tests. Metrics (these readers, the
   * Prometheus endpoint and the OTLP metric exporter) are set up by the call that registers
   * the process's providers; later calls only share them.
   */
  metricReaders?: IMetricReader[];
}

export interface Telemetry {
  readonly tracer: Tracer;
  /** Flushes and releases what this call added; the last one shuts the provider down. */
  shutdown(): Promise<void>;
}

interface ProcessTelemetry {
  readonly provider: NodeTracerProvider;
  readonly meterProvider: MeterProvider;
  readonly processors: SwitchableSpanProcessor;
  readonly otlp: OtlpSpanProcessors;
  readonly handles: Set<Telemetry>;
}

let processTelemetry: ProcessTelemetry | undefined;

/** Metric readers of the process: the test's, Prometheus on its own port, OTLP every minute. */
function metricReadersFor(options: TelemetryOptions): IMetricReader[] {
  const readers = [...(options.metricReaders ?? [])];
  if (options.metricsPort !== undefined) {
    readers.push(
      new PrometheusExporter({ port: options.metricsPort }, (error) => {
        if (error) diag.error('the Prometheus metrics endpoint failed to start', error);
      }),
    );
  }
  if (options.otlpEndpoint !== undefined) {
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: otlpMetricsUrl(options.otlpEndpoint) }),
      }),
    );
  }
  return readers;
}

function createMeterProvider(resource: Resource, options: TelemetryOptions): MeterProvider {
  const meterProvider = new MeterProvider({ resource, readers: metricReadersFor(options) });
  metrics.setGlobalMeterProvider(meterProvider);
  resetGatewayInstruments();
  return meterProvider;
}

function registerProcessTelemetry(options: TelemetryOptions): ProcessTelemetry {
  const processors = new SwitchableSpanProcessor();
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName });
  const meterProvider = createMeterProvider(resource, options);
  const provider = new NodeTracerProvider({
    resource,
    sampler: new RecordWhileExportingSampler(processors),
    spanProcessors: [processors],
  });
  // The context manager comes with the first span processor (ensureTraceContext): without
  // one nothing is recorded, and keeping a context costs async hooks on every promise.
  provider.register({
    contextManager: null,
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  return {
    provider,
    meterProvider,
    processors,
    otlp: new OtlpSpanProcessors(processors),
    handles: new Set(),
  };
}

/**
 * Whether spans are recorded (some processor receives them: an OTLP exporter, or a
 * test's). Without one the gateway keeps no trace context at all: no AsyncLocalStorage (whose
 * async hooks cost a sixth of an introspection's CPU on Node 20), no spans, no `traceparent`
 * between services, and log lines carry no trace ids; metrics are kept either way.
 */
export function isTracingRecording(): boolean {
  return processTelemetry !== undefined && !processTelemetry.processors.isEmpty;
}

let traceContextOwner: ProcessTelemetry | undefined;

/** Registers the AsyncLocalStorage context manager once spans are recorded. */
function ensureTraceContext(owner: ProcessTelemetry): void {
  if (traceContextOwner === owner || owner.processors.isEmpty) return;
  traceContextOwner = owner;
  const manager = new AsyncLocalStorageContextManager();
  manager.enable();
  context.setGlobalContextManager(manager);
}

/** The globals go first, so a `startTelemetry` during the flush starts afresh. */
function unregisterProcessTelemetry(owner: ProcessTelemetry): void {
  if (processTelemetry !== owner) return;
  processTelemetry = undefined;
  traceContextOwner = undefined;
  trace.disable();
  propagation.disable();
  context.disable();
  metrics.disable();
  resetGatewayInstruments();
}

async function settle(label: string, work: Promise<unknown>[]): Promise<void> {
  for (const result of await Promise.allSettled(work)) {
    if (result.status === 'rejected') diag.warn(`telemetry ${label} failed`, result.reason);
  }
}

/**
 * Starts tracing and metrics for one service. The first call in a process registers the global tracer
 * provider (AsyncLocalStorage context, W3C trace-context + baggage propagation) with
 * `service.name` = `serviceName`; later calls (the all-in-one process runs four services)
 * reuse it and only add their processors. Without any processor spans are not recorded.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const otlpUrl =
    options.otlpEndpoint === undefined ? undefined : otlpTracesUrl(options.otlpEndpoint);
  const registered = processTelemetry;
  if (
    registered !== undefined &&
    (options.metricsPort !== undefined || (options.metricReaders?.length ?? 0) > 0)
  ) {
    diag.warn('telemetry: metrics are set up by the first startTelemetry of the process');
  }
  const owner = registered ?? registerProcessTelemetry(options);
  processTelemetry = owner;

  const extraProcessors = [...(options.spanProcessors ?? [])];
  for (const processor of extraProcessors) owner.processors.add(processor);
  if (otlpUrl !== undefined) owner.otlp.acquire(otlpUrl);
  ensureTraceContext(owner);

  let stopping: Promise<void> | undefined;
  const handle: Telemetry = {
    tracer: owner.provider.getTracer(options.serviceName),
    shutdown() {
      stopping ??= (async () => {
        owner.handles.delete(handle);
        const last = owner.handles.size === 0;
        if (last) unregisterProcessTelemetry(owner);
        for (const processor of extraProcessors) owner.processors.remove(processor);
        await settle('shutdown', [
          ...extraProcessors.map((processor) => processor.shutdown()),
          ...(otlpUrl === undefined ? [] : [owner.otlp.release(otlpUrl)]),
        ]);
        if (last) {
          await settle('shutdown', [owner.provider.shutdown(), owner.meterProvider.shutdown()]);
        }
      })();
      return stopping;
    },
  };
  owner.handles.add(handle);
  return handle;
}

/** A tracer from the global provider (a no-op tracer until `startTelemetry` runs). */
export function getTracer(name: string): Tracer {
  return trace.getTracer(name);
}

/** Exports every span that has ended so far, e.g. before a process hands over to another. */
export async function flushTelemetry(): Promise<void> {
  if (processTelemetry) {
    await settle('flush', [
      processTelemetry.provider.forceFlush(),
      processTelemetry.meterProvider.forceFlush(),
    ]);
  }
}

/**
 * Shuts down every Telemetry of the process (flushing their exporters) and unregisters the
 * global provider. Call it once on SIGTERM after the servers stopped accepting requests;
 * it never rejects, so the process can exit right after.
 */
export async function shutdownTelemetry(): Promise<void> {
  const owner = processTelemetry;
  if (!owner) return;
  await Promise.all([...owner.handles].map((handle) => handle.shutdown()));
}
