import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { generateEncryptionKeySpec } from '@gateway/crypto';
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponse_ServingStatus,
  HealthCheckResponseSchema,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from '@gateway/contracts';
import {
  createTestDatabase,
  createTestRedis,
  unusedLocalPort,
  waitFor,
  type TestDatabase,
  type TestRedis,
} from '@gateway/testkit';
import { startSplitDeployment, type SplitDeployment, type SplitPorts } from './split-launcher.js';

// The split deployment as separate processes (edge + three HTTP/2 Connect services) against
// real PostgreSQL and Redis: what docker-compose and Kubernetes run.
describe('split mode', () => {
  let testDb: TestDatabase;
  let testRedis: TestRedis;
  let ports: SplitPorts;
  let deployment: SplitDeployment;
  const output: string[] = [];

  beforeAll(async () => {
    testDb = await createTestDatabase();
    testRedis = await createTestRedis();
    ports = {
      edge: await unusedLocalPort(),
      registry: await unusedLocalPort(),
      authFlow: await unusedLocalPort(),
      onboarding: await unusedLocalPort(),
    };
    deployment = startSplitDeployment({
      ports,
      env: {
        PATH: process.env.PATH,
        IDENTITY_ISSUER: 'http://localhost:8080/api/auth/env/PROD',
        DATABASE_URL: testDb.url,
        REDIS_URL: testRedis.url,
        REDIS_KEY_PREFIX: testRedis.keyPrefix,
        GATEWAY_ENCRYPTION_KEYS: generateEncryptionKeySpec('k1'),
        LOG_LEVEL: 'warn',
      },
      onLine: (service, line) => output.push(`${service}: ${line}`),
    });
    await waitFor(
      async () => {
        const response = await fetch(`http://127.0.0.1:${ports.edge}/health/ready`).catch(
          () => undefined,
        );
        return response?.status === 200;
      },
      { timeoutMs: 90_000, intervalMs: 300, what: 'the split edge to answer ready' },
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output.join('\n')}`);
    });
  });

  afterAll(async () => {
    await deployment.stop();
    await testRedis.cleanup();
    await testDb.drop();
  });

  it('answers ready through the edge, which reaches every service over HTTP/2 Connect', async () => {
    const response = await fetch(`http://127.0.0.1:${ports.edge}/health/ready`);
    expect(response.status).toBe(200);
    // The deployment's issuer here answers nothing: readiness may name it in `details` beside
    // a ready status, which it does not change.
    expect(await response.json()).toMatchObject({
      status: 'ready',
      checks: { registry: 'up', authFlow: 'up', onboarding: 'up' },
    });
  });

  it('serves each internal service to Connect and gRPC-Web clients', async () => {
    for (const port of [ports.registry, ports.authFlow, ports.onboarding]) {
      const baseUrl = `http://127.0.0.1:${port}`;
      const connect = createClient(Health, createConnectTransport({ baseUrl, httpVersion: '2' }));
      expect((await connect.check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const grpcWeb = createClient(Health, createGrpcWebTransport({ baseUrl, httpVersion: '2' }));
      expect((await grpcWeb.check({})).status).toBe(HealthCheckResponse_ServingStatus.SERVING);
    }
  });

  it('serves the gRPC health-checking protocol to a plain @grpc/grpc-js client', async () => {
    const definition = {
      check: {
        path: '/grpc.health.v1.Health/Check',
        requestStream: false,
        responseStream: false,
        requestSerialize: (message: HealthCheckRequest) =>
          Buffer.from(toBinary(HealthCheckRequestSchema, message)),
        requestDeserialize: (bytes: Buffer) => fromBinary(HealthCheckRequestSchema, bytes),
        responseSerialize: (message: HealthCheckResponse) =>
          Buffer.from(toBinary(HealthCheckResponseSchema, message)),
        responseDeserialize: (bytes: Buffer) => fromBinary(HealthCheckResponseSchema, bytes),
      },
    } satisfies grpc.ServiceDefinition;
    const HealthClient = grpc.makeGenericClientConstructor(definition, 'Health');
    const client = new HealthClient(
      `127.0.0.1:${ports.registry}`,
      grpc.credentials.createInsecure(),
    );
    const ask = (service: string) =>
      new Promise<{ error: grpc.ServiceError | null; response?: HealthCheckResponse }>(
        (resolve) => {
          client.makeUnaryRequest(
            definition.check.path,
            definition.check.requestSerialize,
            definition.check.responseDeserialize,
            create(HealthCheckRequestSchema, { service }),
            (error: grpc.ServiceError | null, response?: HealthCheckResponse) =>
              resolve({ error, ...(response === undefined ? {} : { response }) }),
          );
        },
      );
    try {
      const overall = await ask('');
      expect(overall.error).toBeNull();
      expect(overall.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const named = await ask('registry.v1.RegistryService');
      expect(named.response?.status).toBe(HealthCheckResponse_ServingStatus.SERVING);
      const unknown = await ask('nope.v1.NopeService');
      expect(unknown.error?.code).toBe(grpc.status.NOT_FOUND);
    } finally {
      client.close();
    }
  });

  it('stops a service whose required configuration is missing, naming the variable', async () => {
    const child = spawn(
      process.execPath,
      ['--conditions=@gateway/source', '--import', 'tsx', 'services/registry/src/main.ts'],
      {
        env: {
          PATH: process.env.PATH,
          IDENTITY_ISSUER: 'http://localhost:9/x',
          PORT: String(await unusedLocalPort()),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('DATABASE_URL');
  });
});
