import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { SwitchableSpanProcessor } from './switchable-span-processor.js';

/**
 * Turns a configured OTLP endpoint into the traces URL. A base endpoint
 * (`http://collector:4318`, as in OTEL_EXPORTER_OTLP_ENDPOINT) gets `/v1/traces`; a URL that
 * already names a path (`http://collector:4318/v1/traces`) is used as given.
 */
export function otlpTracesUrl(endpoint: string): string {
  const url = URL.canParse(endpoint) ? new URL(endpoint) : undefined;
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new TypeError('otlpEndpoint must be an absolute URL such as http://collector:4318');
  }
  if (url.pathname === '' || url.pathname === '/') url.pathname = '/v1/traces';
  return url.toString();
}

/**
 * The metrics URL of the same endpoint: a base endpoint gets `/v1/metrics`, a traces URL
 * (`.../v1/traces`) its metrics sibling, any other path `/v1/metrics` appended.
 */
export function otlpMetricsUrl(endpoint: string): string {
  const url = new URL(otlpTracesUrl(endpoint));
  url.pathname = url.pathname.endsWith('/v1/traces')
    ? url.pathname.replace(/\/v1\/traces$/, '/v1/metrics')
    : `${url.pathname.replace(/\/$/, '')}/v1/metrics`;
  return url.toString();
}

interface SharedProcessor {
  readonly processor: SpanProcessor;
  users: number;
}

/**
 * One batch processor per OTLP traces URL, shared by every service of the process that asks
 * for the same endpoint, so the all-in-one process does not export each span four times.
 */
export class OtlpSpanProcessors {
  readonly #byUrl = new Map<string, SharedProcessor>();
  readonly #target: SwitchableSpanProcessor;

  constructor(target: SwitchableSpanProcessor) {
    this.#target = target;
  }

  /** Takes a URL made by `otlpTracesUrl`. */
  acquire(url: string): void {
    const shared = this.#byUrl.get(url);
    if (shared) {
      shared.users += 1;
      return;
    }
    const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url }));
    this.#byUrl.set(url, { processor, users: 1 });
    this.#target.add(processor);
  }

  async release(url: string): Promise<void> {
    const shared = this.#byUrl.get(url);
    if (!shared) return;
    shared.users -= 1;
    if (shared.users > 0) return;
    this.#byUrl.delete(url);
    this.#target.remove(shared.processor);
    await shared.processor.shutdown();
  }
}
