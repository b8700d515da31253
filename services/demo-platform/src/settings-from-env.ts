import { z } from 'zod';
import type { DemoPlatformOptions } from './demo-platform-app.js';

export type DemoPlatformSettings = Omit<DemoPlatformOptions, 'fetch' | 'log'> & { port: number };

/** A bad or missing variable; the message names each one and never echoes a value. */
export class DemoPlatformConfigError extends Error {
  override readonly name = 'DemoPlatformConfigError';
}

const port = z.coerce
  .number({ error: 'must be an integer from 1 to 65535' })
  .int({ error: 'must be an integer from 1 to 65535' })
  .min(1, { error: 'must be an integer from 1 to 65535' })
  .max(65535, { error: 'must be an integer from 1 to 65535' });
const httpUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .refine((value) => new URL(value).username === '' && new URL(value).password === '', {
    error: 'must not carry credentials',
  });
const secret = (what: string) =>
  z.string({ error: `is required: ${what}` }).min(16, { error: `${what}, at least 16 characters` });
const clientId = (what: string) =>
  z
    .string({ error: `is required: ${what}` })
    .regex(/^[0-9A-Za-z@._~-]{1,128}$/, { error: `${what} (letters, digits, @ . _ ~ -)` });

const envSchema = z.object({
  DEMO_PLATFORM_PORT: port.default(3000),
  DEMO_PLATFORM_PUBLIC_ORIGIN: httpUrl.optional(),
  GATEWAY_URL: httpUrl.default('http://localhost:8080'),
  DEMO_PLATFORM_KEY: z
    .string()
    .regex(/^[A-Z][A-Z0-9_]{1,63}$/, { error: 'must match ^[A-Z][A-Z0-9_]{1,63}$' })
    .default('DEMO'),
  DEMO_PLATFORM_BFF_CLIENT_ID: clientId('the client ID of the platform BFF key'),
  DEMO_PLATFORM_BFF_CLIENT_SECRET: secret('the client secret of the platform BFF key'),
  DEMO_PLATFORM_BACKEND_CLIENT_ID: clientId('the client ID of the platform backend key').optional(),
  DEMO_PLATFORM_BACKEND_CLIENT_SECRET: secret(
    'the client secret of the platform backend key',
  ).optional(),
});

/** The variables `main.ts` reads, for the error message and the README. */
export const demoPlatformVariables = Object.keys(envSchema.shape);

/**
 * The demo platform's settings from environment variables, parsed once at start. Empty
 * values count as unset. A bad value throws DemoPlatformConfigError naming every bad
 * variable (never its value: two of them are secrets).
 */
export function demoPlatformSettingsFromEnv(env: NodeJS.ProcessEnv): DemoPlatformSettings {
  const present = Object.fromEntries(
    demoPlatformVariables
      .map((name) => [name, env[name]?.trim()] as const)
      .filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `  ${String(issue.path[0] ?? 'environment')}: ${issue.message}`,
    );
    throw new DemoPlatformConfigError(`Configuration error:\n${problems.join('\n')}`);
  }
  const values = parsed.data;
  const backendId = values.DEMO_PLATFORM_BACKEND_CLIENT_ID;
  const backendSecret = values.DEMO_PLATFORM_BACKEND_CLIENT_SECRET;
  if ((backendId === undefined) !== (backendSecret === undefined)) {
    throw new DemoPlatformConfigError(
      'Configuration error:\n  DEMO_PLATFORM_BACKEND_CLIENT_ID, DEMO_PLATFORM_BACKEND_CLIENT_SECRET: set both or neither',
    );
  }
  const publicOrigin =
    values.DEMO_PLATFORM_PUBLIC_ORIGIN === undefined
      ? `http://localhost:${values.DEMO_PLATFORM_PORT}`
      : new URL(values.DEMO_PLATFORM_PUBLIC_ORIGIN).origin;
  return {
    port: values.DEMO_PLATFORM_PORT,
    publicOrigin,
    gatewayUrl: values.GATEWAY_URL.replace(/\/+$/, ''),
    platformKey: values.DEMO_PLATFORM_KEY,
    bffKey: {
      clientId: values.DEMO_PLATFORM_BFF_CLIENT_ID,
      clientSecret: values.DEMO_PLATFORM_BFF_CLIENT_SECRET,
    },
    ...(backendId === undefined || backendSecret === undefined
      ? {}
      : { backendKey: { clientId: backendId, clientSecret: backendSecret } }),
  };
}

/** The demo platform's port from DEMO_PLATFORM_PORT (default 3000), for the all-in-one start. */
export function demoPlatformPortFromEnv(env: NodeJS.ProcessEnv): number {
  const value = env.DEMO_PLATFORM_PORT?.trim();
  const parsed = port.default(3000).safeParse(value === '' ? undefined : value);
  if (!parsed.success) {
    throw new DemoPlatformConfigError(
      'Configuration error:\n  DEMO_PLATFORM_PORT: must be an integer from 1 to 65535',
    );
  }
  return parsed.data;
}
