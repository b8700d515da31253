import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** An in-memory exporter behind a SimpleSpanProcessor: what tests pass to startTelemetry. */
export function createMemorySpans(): {
  exporter: InMemorySpanExporter;
  processor: SimpleSpanProcessor;
} {
  const exporter = new InMemorySpanExporter();
  return { exporter, processor: new SimpleSpanProcessor(exporter) };
}

/** Waits until `count` spans have ended (HTTP spans end after the client got its response). */
export async function waitForSpans(
  exporter: InMemorySpanExporter,
  count: number,
  timeoutMs = 5_000,
): Promise<ReadableSpan[]> {
  const deadline = Date.now() + timeoutMs;
  while (exporter.getFinishedSpans().length < count) {
    if (Date.now() > deadline) {
      const names = exporter.getFinishedSpans().map((span) => span.name);
      throw new Error(`expected ${count} spans, got ${names.length}: ${names.join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return exporter.getFinishedSpans();
}

/** The span with that name; fails loudly when there is none or more than one. */
export function spanNamed(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) {
    const names = spans.map((span) => span.name).join(', ');
    throw new Error(`expected one span named ${name}, found ${found.length} among: ${names}`);
  }
  return found[0];
}

/** Every attribute value of every span (and span event) as text, for "never contains" checks. */
export function allAttributeText(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => [span.name, span.attributes, span.events.map((event) => event.attributes)]),
  );
}
