import { metrics } from '@opentelemetry/api';
import type { Attributes, Counter, Histogram } from '@opentelemetry/api';

/** Meter (instrumentation scope) of the gateway's own instruments. */
export const GATEWAY_METER_NAME = '@gateway/telemetry';

/** What `gateway.dependency.errors` counts, by its `dependency` attribute. */
export type DependencyName = 'postgres' | 'redis' | 'identity' | 'service';

interface GatewayInstruments {
  readonly httpServerDuration: Histogram;
  readonly signInOutcomes: Counter;
  readonly handoffRedemptions: Counter;
  readonly introspectResults: Counter;
  readonly dependencyErrors: Counter;
  readonly shedRequests: Counter;
  readonly platformAuthenticationFailures: Counter;
}

/** What `gateway.platform_auth.failures` counts, by its `outcome` attribute. */
export type PlatformAuthenticationFailureOutcome =
  'unauthorized' | 'limited_address' | 'limited_client_id';

let instruments: GatewayInstruments | undefined;

function createInstruments(): GatewayInstruments {
  const meter = metrics.getMeter(GATEWAY_METER_NAME);
  return {
    httpServerDuration: meter.createHistogram('gateway.http.server.duration', {
      description: 'Duration of edge HTTP requests, by operationId and status code.',
      unit: 'ms',
    }),
    signInOutcomes: meter.createCounter('gateway.signin.outcomes', {
      description: 'Completed sign-in callbacks by outcome: handoff, onboarding_*, or error code.',
    }),
    handoffRedemptions: meter.createCounter('gateway.handoff.redemptions', {
      description: 'Handoff code exchanges by result: redeemed or refused.',
    }),
    introspectResults: meter.createCounter('gateway.introspect.results', {
      description: 'Session introspections by answer (active true or false).',
    }),
    dependencyErrors: meter.createCounter('gateway.dependency.errors', {
      description: 'Failed calls to a dependency: postgres, redis, identity or service.',
    }),
    shedRequests: meter.createCounter('gateway.http.server.shed', {
      description:
        'Requests refused with 503 at the bound of requests in flight, by operationId (not in gateway.http.server.duration).',
    }),
    platformAuthenticationFailures: meter.createCounter('gateway.platform_auth.failures', {
      description:
        'Failed platform Basic authentications by outcome: unauthorized (401), or limited_address / limited_client_id (429 by the back-off).',
    }),
  };
}

/**
 * The instruments, created once per registered meter provider (not per request). Instruments
 * taken from the API before a provider is registered are no-ops for good, so startTelemetry
 * calls `resetGatewayInstruments` whenever it registers or unregisters one.
 */
function gatewayInstruments(): GatewayInstruments {
  return (instruments ??= createInstruments());
}

export function resetGatewayInstruments(): void {
  instruments = undefined;
}

// Constant attribute sets of the bounded counters: recording allocates nothing.
const redemptionResults = {
  redeemed: { result: 'redeemed' },
  refused: { result: 'refused' },
} satisfies Record<string, Attributes>;
const active: Attributes = { active: true };
const inactive: Attributes = { active: false };
const dependencyAttributes: Record<DependencyName, Attributes> = {
  postgres: { dependency: 'postgres' },
  redis: { dependency: 'redis' },
  identity: { dependency: 'identity' },
  service: { dependency: 'service' },
};
/** `{ [name]: value }` for a bounded attribute, made once per value. */
function attributesBy(name: string): (value: string) => Attributes {
  const made = new Map<string, Attributes>();
  return (value) => {
    let attributes = made.get(value);
    if (attributes === undefined) {
      attributes = { [name]: value };
      made.set(value, attributes);
    }
    return attributes;
  };
}
const signInOutcomeAttributes = attributesBy('outcome');
const shedAttributes = attributesBy('operation');
const platformAuthenticationOutcomes: Record<PlatformAuthenticationFailureOutcome, Attributes> = {
  unauthorized: { outcome: 'unauthorized' },
  limited_address: { outcome: 'limited_address' },
  limited_client_id: { outcome: 'limited_client_id' },
};

/** Recording into the global meter provider; each is a no-op until startTelemetry runs. */
export const gatewayMetrics = {
  /** `gateway.http.server.duration` (ms), `operation` = the spec's operationId. */
  recordHttpServerDuration(operation: string, statusCode: number, durationMs: number): void {
    gatewayInstruments().httpServerDuration.record(durationMs, {
      operation,
      status_code: statusCode,
    });
  },
  /** `gateway.signin.outcomes`: handoff, onboarding_global, onboarding_platform or an error code. */
  recordSignInOutcome(outcome: string): void {
    gatewayInstruments().signInOutcomes.add(1, signInOutcomeAttributes(outcome));
  },
  /** `gateway.handoff.redemptions`: `redeemed`, or `refused` (404 or 503, spec 4.4). */
  recordHandoffRedemption(result: keyof typeof redemptionResults): void {
    gatewayInstruments().handoffRedemptions.add(1, redemptionResults[result]);
  },
  /** `gateway.introspect.results`. */
  recordIntrospectResult(isActive: boolean): void {
    gatewayInstruments().introspectResults.add(1, isActive ? active : inactive);
  },
  /** `gateway.dependency.errors`. */
  recordDependencyError(dependency: DependencyName): void {
    gatewayInstruments().dependencyErrors.add(1, dependencyAttributes[dependency]);
  },
  /** `gateway.http.server.shed`, `operation` = the spec's operationId. */
  recordShedRequest(operation: string): void {
    gatewayInstruments().shedRequests.add(1, shedAttributes(operation));
  },
  /** `gateway.platform_auth.failures`. */
  recordPlatformAuthenticationFailure(outcome: PlatformAuthenticationFailureOutcome): void {
    gatewayInstruments().platformAuthenticationFailures.add(
      1,
      platformAuthenticationOutcomes[outcome],
    );
  },
};
