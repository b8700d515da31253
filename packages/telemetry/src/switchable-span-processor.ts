import type { Context } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * A span processor whose set of downstream processors can change after the tracer provider
 * was built. OpenTelemetry 2.x fixes a provider's processors at construction, but the
 * all-in-one process starts four services, and each may bring its own exporter.
 */
export class SwitchableSpanProcessor implements SpanProcessor {
  readonly #processors = new Set<SpanProcessor>();

  get isEmpty(): boolean {
    return this.#processors.size === 0;
  }

  add(processor: SpanProcessor): void {
    this.#processors.add(processor);
  }

  remove(processor: SpanProcessor): void {
    this.#processors.delete(processor);
  }

  onStart(span: Span, parentContext: Context): void {
    for (const processor of this.#processors) processor.onStart(span, parentContext);
  }

  onEnding(span: Span): void {
    for (const processor of this.#processors) processor.onEnding?.(span);
  }

  onEnd(span: ReadableSpan): void {
    for (const processor of this.#processors) processor.onEnd(span);
  }

  async forceFlush(): Promise<void> {
    await Promise.all([...this.#processors].map((processor) => processor.forceFlush()));
  }

  async shutdown(): Promise<void> {
    const processors = [...this.#processors];
    this.#processors.clear();
    await Promise.all(processors.map((processor) => processor.shutdown()));
  }
}
