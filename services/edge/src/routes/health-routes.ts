import type { Router } from 'express';
import { z } from 'zod';
import { HealthCheckResponse_ServingStatus } from '@gateway/contracts';
import { GatewayError } from '@gateway/errors';
import { defineOperation } from '../http/operation.js';
import { ErrorBodySchema, type OperationCatalog } from '../http/operation-catalog.js';
import type { EdgeClients, InternalServiceName } from '../service-clients.js';

const LivenessSchema = z.object({ status: z.literal('live') }).meta({ id: 'Liveness' });
const ReadinessSchema = z
  .object({
    status: z.literal('ready'),
    checks: z.record(z.string(), z.enum(['up', 'down'])),
  })
  .meta({ id: 'Readiness' });

/** Spec 4.14: liveness checks nothing; readiness checks the persistent store. */
export function registerHealthRoutes(
  router: Router,
  catalog: OperationCatalog,
  clients: EdgeClients,
  options: { probeTimeoutMs: number },
): void {
  defineOperation(router, catalog, {
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
    handler: (_input, _req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.json({ status: 'live' });
    },
  });

  defineOperation(router, catalog, {
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
    handler: async (_input, _req, res) => {
      const names = Object.keys(clients.health) as InternalServiceName[];
      const results = await Promise.all(
        names.map(async (name) => {
          try {
            const answer = await clients.health[name].check(
              {},
              { timeoutMs: options.probeTimeoutMs },
            );
            return [name, answer.status === HealthCheckResponse_ServingStatus.SERVING] as const;
          } catch {
            return [name, false] as const;
          }
        }),
      );
      const checks = Object.fromEntries(results.map(([name, up]) => [name, up ? 'up' : 'down']));
      res.setHeader('Cache-Control', 'no-store');
      if (results.some(([, up]) => !up)) {
        throw new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is not ready.', {
          details: { checks },
        });
      }
      res.json({ status: 'ready', checks });
    },
  });
}
