import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { SpanKind, context, propagation, trace } from '@opentelemetry/api';
import { flushTelemetry, getTracer, shutdownTelemetry, startTelemetry } from './start-telemetry.js';
import { otlpTracesUrl } from './otlp-span-processors.js';
import { createMemorySpans } from './testing/memory-spans.js';

afterEach(async () => {
  await shutdownTelemetry();
});

describe('startTelemetry', () => {
  it('records spans with service.name and hands them to the given processors', () => {
    const memory = createMemorySpans();
    const telemetry = startTelemetry({ serviceName: 'edge', spanProcessors: [memory.processor] });

    telemetry.tracer.startSpan('work').end();

    const [span] = memory.exporter.getFinishedSpans();
    expect(span?.name).toBe('work');
    expect(span?.resource.attributes['service.name']).toBe('edge');
    expect(span?.instrumentationScope.name).toBe('edge');
  });

  it('registers AsyncLocalStorage context and W3C trace-context + baggage propagation', async () => {
    const memory = createMemorySpans();
    startTelemetry({ serviceName: 'edge', spanProcessors: [memory.processor] });
    const tracer = getTracer('test');

    const carrier: Record<string, string> = {};
    await tracer.startActiveSpan('outer', async (outer) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(trace.getActiveSpan()).toBe(outer);
      propagation.inject(context.active(), carrier);
      outer.end();
    });

    expect(propagation.fields()).toEqual(expect.arrayContaining(['traceparent', 'baggage']));
    const [outer] = memory.exporter.getFinishedSpans();
    expect(carrier.traceparent).toBe(
      `00-${outer?.spanContext().traceId}-${outer?.spanContext().spanId}-01`,
    );
  });

  it('reuses the provider of the first call when a second service starts in the same process', () => {
    const edgeSpans = createMemorySpans();
    const registrySpans = createMemorySpans();
    const edge = startTelemetry({ serviceName: 'edge', spanProcessors: [edgeSpans.processor] });
    const registry = startTelemetry({
      serviceName: 'registry',
      spanProcessors: [registrySpans.processor],
    });

    edge.tracer.startActiveSpan('edge work', (outer) => {
      registry.tracer.startSpan('registry work', { kind: SpanKind.SERVER }).end();
      outer.end();
    });

    const spans = edgeSpans.exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['registry work', 'edge work']);
    expect(registrySpans.exporter.getFinishedSpans()).toHaveLength(2);
    const [registryWork, edgeWork] = spans;
    expect(registryWork?.instrumentationScope.name).toBe('registry');
    expect(registryWork?.resource.attributes['service.name']).toBe('edge');
    expect(registryWork?.parentSpanContext?.spanId).toBe(edgeWork?.spanContext().spanId);
  });

  it('keeps tracing for the others when one service of the process shuts down', async () => {
    const edgeSpans = createMemorySpans();
    const registrySpans = createMemorySpans();
    const edge = startTelemetry({ serviceName: 'edge', spanProcessors: [edgeSpans.processor] });
    const registry = startTelemetry({
      serviceName: 'registry',
      spanProcessors: [registrySpans.processor],
    });

    await registry.shutdown();
    await registry.shutdown();
    edge.tracer.startSpan('after registry stopped').end();

    expect(edgeSpans.exporter.getFinishedSpans().map((span) => span.name)).toEqual([
      'after registry stopped',
    ]);
    expect(trace.getTracer('any').startSpan('still recording').isRecording()).toBe(true);
  });

  it('unregisters the globals when the last service shuts down, so it can start again', async () => {
    const first = createMemorySpans();
    await startTelemetry({ serviceName: 'edge', spanProcessors: [first.processor] }).shutdown();

    expect(trace.getTracer('any').startSpan('after shutdown').isRecording()).toBe(false);
    expect(propagation.fields()).toEqual([]);

    const second = createMemorySpans();
    const again = startTelemetry({ serviceName: 'registry', spanProcessors: [second.processor] });
    again.tracer.startSpan('again').end();
    expect(second.exporter.getFinishedSpans()[0]?.resource.attributes['service.name']).toBe(
      'registry',
    );
  });

  it('does not record spans without any processor, but still propagates their ids', () => {
    const telemetry = startTelemetry({ serviceName: 'edge' });

    const span = telemetry.tracer.startSpan('cheap');
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), span), carrier);

    expect(span.isRecording()).toBe(false);
    expect(carrier.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
    span.end();
  });

  it('starts recording once a later service brings a processor', () => {
    startTelemetry({ serviceName: 'all-in-one' });
    const memory = createMemorySpans();
    const registry = startTelemetry({
      serviceName: 'registry',
      spanProcessors: [memory.processor],
    });

    registry.tracer.startSpan('recorded').end();

    expect(memory.exporter.getFinishedSpans().map((span) => span.name)).toEqual(['recorded']);
  });

  it('rejects an otlpEndpoint that is not an absolute URL before registering anything', () => {
    expect(() => startTelemetry({ serviceName: 'edge', otlpEndpoint: 'collector:4318' })).toThrow(
      /otlpEndpoint must be an absolute URL/,
    );
    expect(() => startTelemetry({ serviceName: 'edge', otlpEndpoint: 'not a url' })).toThrow(
      TypeError,
    );
    expect(trace.getTracer('any').startSpan('nothing registered').isRecording()).toBe(false);
  });
});

describe('OTLP export', () => {
  it('sends spans to <endpoint>/v1/traces on flush and at shutdown, once per endpoint', async () => {
    const received: { path: string; body: string }[] = [];
    const collector = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const bodies = (): string => received.map((request) => request.body).join('\n');

    try {
      const edge = startTelemetry({ serviceName: 'edge', otlpEndpoint: endpoint });
      const registry = startTelemetry({ serviceName: 'registry', otlpEndpoint: `${endpoint}/` });

      edge.tracer.startSpan('flushed-span').end();
      await flushTelemetry();
      expect(bodies()).toContain('flushed-span');

      registry.tracer.startSpan('span-at-shutdown').end();
      await Promise.all([edge.shutdown(), registry.shutdown()]);
      expect(bodies()).toContain('span-at-shutdown');
    } finally {
      await new Promise<void>((resolve) => collector.close(() => resolve()));
    }

    expect(received.every((request) => request.path === '/v1/traces')).toBe(true);
    expect(bodies().split('flushed-span')).toHaveLength(2);
    expect(bodies().split('span-at-shutdown')).toHaveLength(2);
    expect(bodies()).toContain('"service.name"');
  });

  it('appends /v1/traces to a base endpoint and keeps an explicit path', () => {
    expect(otlpTracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(otlpTracesUrl('http://collector:4318/')).toBe('http://collector:4318/v1/traces');
    expect(otlpTracesUrl('https://otel.example/custom/traces')).toBe(
      'https://otel.example/custom/traces',
    );
  });
});
