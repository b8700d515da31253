import { afterEach, describe, expect, it } from '@jest/globals';
import { MetricReader } from '@opentelemetry/sdk-metrics';
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics';
import {
  failDependencySpan,
  startDependencySpan,
  traceDependencyCall,
} from './dependency-spans.js';
import { gatewayMetrics } from './gateway-metrics.js';
import { otlpMetricsUrl } from './otlp-span-processors.js';
import { shutdownTelemetry, startTelemetry } from './start-telemetry.js';
import { allAttributeText, createMemorySpans } from './testing/memory-spans.js';

/** A reader the test collects from on demand. */
class CollectingReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

async function points(reader: CollectingReader, name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics
    .flatMap((scope) => scope.metrics)
    .find((candidate) => candidate.descriptor.name === name);
  return (metric?.dataPoints ?? []) as DataPoint<unknown>[];
}

function start() {
  const memory = createMemorySpans();
  const reader = new CollectingReader();
  startTelemetry({
    serviceName: 'test',
    spanProcessors: [memory.processor],
    metricReaders: [reader],
  });
  return { memory, reader };
}

afterEach(async () => {
  await shutdownTelemetry();
});

describe('gateway metrics', () => {
  it('records into the meter provider registered after the instruments were first used', async () => {
    gatewayMetrics.recordSignInOutcome('handoff'); // before startTelemetry: a no-op
    const { reader } = start();
    gatewayMetrics.recordSignInOutcome('handoff');
    gatewayMetrics.recordSignInOutcome('NONCE_MISMATCH');
    gatewayMetrics.recordHandoffRedemption('refused');
    gatewayMetrics.recordIntrospectResult(false);
    gatewayMetrics.recordHttpServerDuration('startAuthentication', 302, 12);
    gatewayMetrics.recordShedRequest('introspectGatewaySession');
    gatewayMetrics.recordShedRequest('introspectGatewaySession');
    gatewayMetrics.recordShedRequest('startAuthentication');

    const outcomes = await points(reader, 'gateway.signin.outcomes');
    expect(outcomes.map((point) => [point.attributes, point.value])).toEqual([
      [{ outcome: 'handoff' }, 1],
      [{ outcome: 'NONCE_MISMATCH' }, 1],
    ]);
    expect((await points(reader, 'gateway.handoff.redemptions'))[0]?.attributes).toEqual({
      result: 'refused',
    });
    expect((await points(reader, 'gateway.introspect.results'))[0]?.attributes).toEqual({
      active: false,
    });
    const [duration] = await points(reader, 'gateway.http.server.duration');
    expect(duration?.attributes).toEqual({ operation: 'startAuthentication', status_code: 302 });
    expect((duration?.value as Histogram).sum).toBe(12);
    // Refusals at the in-flight bound (S5): counted by operation.
    const shed = await points(reader, 'gateway.http.server.shed');
    expect(shed.map((point) => [point.attributes, point.value])).toEqual([
      [{ operation: 'introspectGatewaySession' }, 2],
      [{ operation: 'startAuthentication' }, 1],
    ]);
  });

  it('a failed dependency call records its error type only, and counts when told to', async () => {
    const { memory, reader } = start();
    const refused = Object.assign(new Error('password=hunter2-secret'), { code: 'ECONNREFUSED' });
    await expect(
      traceDependencyCall(
        'oidc.token',
        { 'url.path': '/token' },
        () => Promise.reject(refused),
        () => 'identity',
      ),
    ).rejects.toBe(refused);
    failDependencySpan(startDependencySpan('pg.query', {}), { code: '23505' });

    const [token, query] = memory.exporter.getFinishedSpans();
    expect(token?.attributes).toEqual({ 'url.path': '/token', 'error.type': 'ECONNREFUSED' });
    expect(token?.status.code).toBe(2);
    expect(query?.attributes).toEqual({ 'error.type': '23505' });
    expect(allAttributeText(memory.exporter.getFinishedSpans())).not.toContain('hunter2');
    const errors = await points(reader, 'gateway.dependency.errors');
    expect(errors.map((point) => [point.attributes, point.value])).toEqual([
      [{ dependency: 'identity' }, 1],
    ]);
  });

  it('exports over OTLP to the metrics path of the configured endpoint', () => {
    expect(otlpMetricsUrl('http://collector:4318')).toBe('http://collector:4318/v1/metrics');
    expect(otlpMetricsUrl('http://collector:4318/v1/traces')).toBe(
      'http://collector:4318/v1/metrics',
    );
    expect(otlpMetricsUrl('http://collector/otlp/')).toBe('http://collector/otlp/v1/metrics');
  });
});
