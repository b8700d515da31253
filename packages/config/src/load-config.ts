import { ConfigError, formatConfigIssues } from './config-error.js';
import type { ConfigIssue } from './config-error.js';
import { configVariables } from './config-variables.js';
import { gatewayEnvSchema } from './env-schema.js';
import type { GatewayEnvName } from './env-schema.js';
import { toGatewayConfig } from './gateway-config.js';
import type { GatewayConfig } from './gateway-config.js';
import { redisSettingsIssues } from './redis-settings.js';

export type LoadConfigOptions = {
  /** Variables this process needs although the schema lets them be unset. */
  require?: readonly GatewayEnvName[];
  /** Problems the caller found in variables of its own (DEMO_PLATFORM_PORT), listed last. */
  issues?: readonly ConfigIssue[];
};

const REQUIRED_RULE = 'is required by this process but is not set';
const schemaOrder = new Map(
  Object.keys(gatewayEnvSchema.shape).map((name, index) => [name, index]),
);
const variablesByName = new Map(configVariables.map((entry) => [entry.name as string, entry]));

/**
 * Parses the environment into a GatewayConfig. Unknown variables are ignored and empty values
 * count as unset. Throws one ConfigError naming every bad variable and the rule it broke:
 * bad values, required ones that are missing (`options.require`) and the caller's own issues.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  options: LoadConfigOptions = {},
): GatewayConfig {
  const result = gatewayEnvSchema.safeParse(env);
  const issues: ConfigIssue[] = [];
  const add = (issue: ConfigIssue) => {
    if (!issues.some((seen) => seen.variable === issue.variable && seen.rule === issue.rule)) {
      issues.push(issue);
    }
  };
  // Only the rule texts written in this package reach the message; they hold no values.
  for (const issue of result.error?.issues ?? []) {
    add({ variable: String(issue.path[0] ?? '(environment)'), rule: issue.message });
  }
  for (const issue of redisSettingsIssues(env)) add(issue);
  const config = result.success ? toGatewayConfig(result.data) : undefined;
  for (const name of options.require ?? []) {
    const unset =
      config === undefined
        ? [name, ...alternativesOf(name)].every((each) => isBlank(env[each]))
        : isUnsetIn(config, name);
    if (unset && !issues.some((issue) => namesOf(issue).includes(name))) {
      add({ variable: name, rule: requiredRule(name) });
    }
  }
  issues.sort((a, b) => orderOf(a) - orderOf(b));
  for (const issue of options.issues ?? []) add(issue);
  if (issues.length > 0 || config === undefined) throw new ConfigError(issues);
  return config;
}

/**
 * loadConfig for process entry points: on ConfigError prints one
 * `Configuration error:\n  - VAR: rule` message to stderr and exits with code 1.
 */
export function loadConfigOrExit(
  env: NodeJS.ProcessEnv = process.env,
  options: LoadConfigOptions = {},
): GatewayConfig {
  try {
    return loadConfig(env, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`Configuration error:\n${formatConfigIssues(error.issues)}\n`);
    return process.exit(1);
  }
}

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
    if (isUnsetIn(config, name)) issues.push({ variable: name, rule: requiredRule(name) });
  }
  if (issues.length > 0) throw new ConfigError(issues);
}

/** Unset, and so are the variables that may stand for it (ConfigVariable.alternatives). */
function isUnsetIn(config: GatewayConfig, name: string): boolean {
  const entry = variablesByName.get(name);
  if (entry === undefined) throw new TypeError(`Unknown configuration variable ${name}`);
  return [entry.field, ...alternativesOf(name).map((other) => fieldOf(other))].every((field) => {
    const value: unknown = config[field];
    return value === undefined || (Array.isArray(value) && value.length === 0);
  });
}

const alternativesOf = (name: string): readonly string[] =>
  variablesByName.get(name)?.alternatives ?? [];

function fieldOf(name: string): keyof GatewayConfig {
  const entry = variablesByName.get(name);
  if (entry === undefined) throw new TypeError(`Unknown configuration variable ${name}`);
  return entry.field;
}

function requiredRule(name: string): string {
  const alternatives = alternativesOf(name);
  if (alternatives.length === 0) return REQUIRED_RULE;
  return `${REQUIRED_RULE} (nor is ${alternatives.join(' or ')}, which may stand for it)`;
}

/** The variables an issue names: one, or several separated by `, ` for a rule across them. */
const namesOf = (issue: ConfigIssue): string[] => issue.variable.split(', ');

/** Schema order by the first variable named; unknown names (the caller's) last. */
const orderOf = (issue: ConfigIssue): number =>
  schemaOrder.get(namesOf(issue)[0] ?? '') ?? Infinity;

const isBlank = (value: string | undefined): boolean => value === undefined || value.trim() === '';
