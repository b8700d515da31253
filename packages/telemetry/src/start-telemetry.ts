import { context, diag, propagation, trace } from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
} from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { OtlpSpanProcessors, otlpTracesUrl } from './otlp-span-processors.js';
import { RecordWhileExportingSampler } from './record-while-exporting-sampler.js';
import { SwitchableSpanProcessor } from './switchable-span-processor.js';

export interface TelemetryOptions {
  /** Becomes `service.name` of the process (first call) and the tracer's name (every call). */
  serviceName: string;
  /** OTLP/HTTP endpoint, e.g. `http://otel-collector:4318` (`/v1/traces` is appended). */
  otlpEndpoint?: string;
  /** Extra processors, e.g. a SimpleSpanProcessor over an InMemorySpanExporter in tests. */
  spanProcessors?: SpanProcessor[];
}

export interface Telemetry {
  readonly tracer: Tracer;
  /** Flushes and releases what this call added; the last one shuts the provider down. */
  shutdown(): Promise<void>;
}

interface ProcessTelemetry {
  readonly provider: NodeTracerProvider;
  readonly processors: SwitchableSpanProcessor;
  readonly otlp: OtlpSpanProcessors;
  readonly handles: Set<Telemetry>;
}

let processTelemetry: ProcessTelemetry | undefined;

function registerProcessTelemetry(serviceName: string): ProcessTelemetry {
  const processors = new SwitchableSpanProcessor();
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    sampler: new RecordWhileExportingSampler(processors),
    spanProcessors: [processors],
  });
  provider.register({
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  return { provider, processors, otlp: new OtlpSpanProcessors(processors), handles: new Set() };
}

/** The globals go first, so a `startTelemetry` during the flush starts afresh. */
function unregisterProcessTelemetry(owner: ProcessTelemetry): void {
  if (processTelemetry !== owner) return;
  processTelemetry = undefined;
  trace.disable();
  propagation.disable();
  context.disable();
}

async function settle(label: string, work: Promise<unknown>[]): Promise<void> {
  for (const result of await Promise.allSettled(work)) {
    if (result.status === 'rejected') diag.warn(`telemetry ${label} failed`, result.reason);
  }
}

/**
 * Starts tracing for one service. The first call in a process registers the global tracer
 * provider (AsyncLocalStorage context, W3C trace-context + baggage propagation) with
 * `service.name` = `serviceName`; later calls (the all-in-one process runs four services)
 * reuse it and only add their processors. Without any processor spans are not recorded.
 */
export function startTelemetry(options: TelemetryOptions): Telemetry {
  const otlpUrl =
    options.otlpEndpoint === undefined ? undefined : otlpTracesUrl(options.otlpEndpoint);
  const owner = processTelemetry ?? registerProcessTelemetry(options.serviceName);
  processTelemetry = owner;

  const extraProcessors = [...(options.spanProcessors ?? [])];
  for (const processor of extraProcessors) owner.processors.add(processor);
  if (otlpUrl !== undefined) owner.otlp.acquire(otlpUrl);

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
        if (last) await settle('shutdown', [owner.provider.shutdown()]);
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
  if (processTelemetry) await settle('flush', [processTelemetry.provider.forceFlush()]);
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
