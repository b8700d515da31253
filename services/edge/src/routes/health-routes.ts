import { z } from 'zod';
import { HealthCheckResponse_ServingStatus } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { defineOperation, type AnyOperation } from '../http/operation.js';
import { ErrorBodySchema } from '../http/operation-catalog.js';
import type { InternalServiceName } from '../service-clients.js';

const LivenessSchema = z.object({ status: z.literal('live') }).meta({ id: 'Liveness' });
const ReadinessSchema = z
  .object({
    status: z.literal('ready'),
    checks: z.record(z.string(), z.enum(['up', 'down'])),
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
    'its Redis. 503 SERVICE_UNAVAILABLE names the part that is down.',
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
    return { status: 'ready', checks };
  },
});

/** Spec 4.14: liveness checks nothing; readiness checks the persistent store. */
export const healthOperations: readonly AnyOperation[] = [getLiveness, getReadiness];
