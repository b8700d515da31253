export { loadConfig, loadConfigOrExit, requireConfigValues } from './load-config.js';
export { ConfigError } from './config-error.js';
export type { ConfigIssue } from './config-error.js';
export type { GatewayConfig, LogLevel, NodeEnv } from './gateway-config.js';
export { gatewayEnvSchema, LOG_LEVELS, NODE_ENVS } from './env-schema.js';
export type { GatewayEnv, GatewayEnvName } from './env-schema.js';
export { configVariables, secretConfigVariableNames } from './config-variables.js';
export type { ConfigVariable } from './config-variables.js';
export { renderConfigTable } from './config-table.js';
