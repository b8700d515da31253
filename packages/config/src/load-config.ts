import { ConfigError, formatConfigIssues } from './config-error.js';
import type { ConfigIssue } from './config-error.js';
import { configVariables } from './config-variables.js';
import { gatewayEnvSchema } from './env-schema.js';
import type { GatewayEnvName } from './env-schema.js';
import { toGatewayConfig } from './gateway-config.js';
import type { GatewayConfig } from './gateway-config.js';

/**
 * Parses the environment into a GatewayConfig. Unknown variables are ignored and empty values
 * count as unset. Throws ConfigError naming every bad variable and the rule it broke.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const result = gatewayEnvSchema.safeParse(env);
  if (!result.success) {
    const issues: ConfigIssue[] = [];
    for (const issue of result.error.issues) {
      const variable = String(issue.path[0] ?? '(environment)');
      // Only the rule texts written in this package reach the message; they hold no values.
      if (!issues.some((seen) => seen.variable === variable && seen.rule === issue.message)) {
        issues.push({ variable, rule: issue.message });
      }
    }
    throw new ConfigError(issues);
  }
  return toGatewayConfig(result.data);
}

/**
 * loadConfig for process entry points: on ConfigError prints
 * `Configuration error:\n  - VAR: rule` to stderr and exits with code 1.
 */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  try {
    return loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Configuration error:\n${formatConfigIssues(error.issues)}\n`);
    return process.exit(1);
  }
}

const variablesByName = new Map(configVariables.map((entry) => [entry.name as string, entry]));

/**
 * Throws ConfigError naming each listed variable that is unset in `config`, for processes
 * that need optional settings (for example GATEWAY_ENCRYPTION_KEYS or split-mode service URLs).
 * An empty list setting counts as unset. Unknown names are a programming error (TypeError).
 */
export function requireConfigValues(
  config: GatewayConfig,
  names: readonly GatewayEnvName[] | readonly string[],
): void {
  const issues: ConfigIssue[] = [];
  for (const name of names) {
    const entry = variablesByName.get(name);
    if (entry === undefined) throw new TypeError(`Unknown configuration variable ${name}`);
    const value: unknown = config[entry.field];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) {
      issues.push({ variable: name, rule: 'is required by this process but is not set' });
    }
  }
  if (issues.length > 0) throw new ConfigError(issues);
}
