import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';
import {
  AlwaysOnSampler,
  ParentBasedSampler,
  SamplingDecision,
} from '@opentelemetry/sdk-trace-base';
import type { Sampler, SamplingResult } from '@opentelemetry/sdk-trace-base';
import type { SwitchableSpanProcessor } from './switchable-span-processor.js';

/**
 * Records spans only while some processor would receive them. Without any processor a span
 * is a non-recording span: its ids still propagate (so logs still carry trace_id) but no
 * attributes, events or timings are kept. With processors, the OpenTelemetry default
 * (parent-based, always on) decides.
 */
export class RecordWhileExportingSampler implements Sampler {
  readonly #processors: SwitchableSpanProcessor;
  readonly #delegate: Sampler;

  constructor(
    processors: SwitchableSpanProcessor,
    delegate: Sampler = new ParentBasedSampler({ root: new AlwaysOnSampler() }),
  ) {
    this.#processors = processors;
    this.#delegate = delegate;
  }

  shouldSample(
    parentContext: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (this.#processors.isEmpty) return { decision: SamplingDecision.NOT_RECORD };
    return this.#delegate.shouldSample(
      parentContext,
      traceId,
      spanName,
      spanKind,
      attributes,
      links,
    );
  }

  toString(): string {
    return `RecordWhileExportingSampler{${this.#delegate.toString()}}`;
  }
}
