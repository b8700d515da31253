import { z } from 'zod';
import { HealthCheckResponse_ServingStatus } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { ErrorBodySchema } from '../http/operation-catalog.js';
import type { IdentityIssuerCheck } from '../identity-issuer-check.js';
import type { InternalServiceName } from '../service-clients.js';

const LivenessSchema = z.object({ status: z.literal('live') }).meta({ id: 'Liveness' });
const IdentityIssuerProblemSchema = z
  .object({
    environmentKey: z.string(),
    issuer: z.string(),
    status: z.literal('unreachable'),
    error: z.string(),
    checkedAt: z.string(),
  })
  .meta({
    id: 'IdentityIssuerProblem',
    description:
      'The deployment identity issuer did not answer its discovery document when last asked ' +
      '(at most every 30 seconds): sign-in fails until it does. Reported, not counted against ' +
      'readiness, which checks the persistent store.',
  });

const ReadinessSchema = z
  .object({
    status: z.literal('ready'),
    checks: z.record(z.string(), z.enum(['up', 'down'])),
    details: z.object({ identityIssuer: IdentityIssuerProblemSchema }).optional(),
  })
  .meta({ id: 'Readiness' });

const getLiveness = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'json', status: 200 },
  operationId: 'getLiveness',
  method: 'get',
  path: '/health/live',
  summary: 'Liveness: the process answers. No dependency is checked.',
  tags: ['Health'],
  responses: {
    200: {
      description: 'The process is alive.',
      content: { 'application/json': { schema: LivenessSchema } },
    },
  },
  handler: async () => ({ status: 'live' }),
});

const getReadiness = defineOperation({
  auth: { kind: 'public' },
  response: { kind: 'json', status: 200 },
  operationId: 'getReadiness',
  method: 'get',
  path: '/health/ready',
  summary: 'Readiness: every internal service reaches its persistent store.',
  description:
    'Asks each internal service (registry, auth-flow, onboarding) through the gRPC ' +
    'health-checking protocol, which probes its PostgreSQL schema and, for auth-flow, ' +
    'its Redis. 503 SERVICE_UNAVAILABLE names the part that is down. A ready answer reports ' +
    'an identity issuer that does not answer in `details.identityIssuer`; it stays ready.',
  tags: ['Health'],
  responses: {
    200: {
      description: 'Ready to serve.',
      content: { 'application/json': { schema: ReadinessSchema } },
    },
    503: {
      description: 'A store or service is unreachable.',
      content: { 'application/json': { schema: ErrorBodySchema } },
    },
  },
  handler: async ({ services }) => {
    const { health } = services.clients;
    const names = Object.keys(health) as InternalServiceName[];
    const results = await Promise.all(
      names.map(async (name) => {
        try {
          const answer = await health[name].check({}, { timeoutMs: services.probeTimeoutMs });
          return [name, answer.status === HealthCheckResponse_ServingStatus.SERVING] as const;
        } catch {
          return [name, false] as const;
        }
      }),
    );
    const checks = Object.fromEntries(results.map(([name, up]) => [name, up ? 'up' : 'down']));
    if (results.some(([, up]) => !up)) {
      throw new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is not ready.', {
        details: { checks },
      });
    }
    // Reported beside a ready status, never changing it: sign-in needs the issuer, but the
    // gateway's own stores are what readiness checks (spec 4.14).
    const identityIssuer = identityIssuerProblem(services.identityIssuer);
    return identityIssuer === undefined
      ? { status: 'ready', checks }
      : { status: 'ready', checks, details: { identityIssuer } };
  },
});

/**
 * The issuer's last known problem, if any; never waits for a check (identity-issuer-check.ts),
 * so a slow issuer cannot slow readiness down.
 */
function identityIssuerProblem(
  check: IdentityIssuerCheck | undefined,
): z.output<typeof IdentityIssuerProblemSchema> | undefined {
  const state = check?.current();
  if (check === undefined || state?.status !== 'unreachable') return undefined;
  const { environmentKey, issuer } = check;
  return {
    environmentKey,
    issuer,
    status: 'unreachable',
    error: state.error,
    checkedAt: state.checkedAt,
  };
}

/** Spec 4.14: liveness checks nothing; readiness checks the persistent store. */
export const healthOperations: readonly AnyOperation[] = [getLiveness, getReadiness];
