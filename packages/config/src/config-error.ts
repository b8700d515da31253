/**
 * One broken configuration rule: the variable's name and the rule, never the value. A rule
 * across several variables names them all, separated by `, ` (`REDIS_URL, REDIS_SENTINELS`).
 */
export type ConfigIssue = { variable: string; rule: string };

/**
 * Thrown when the environment does not make a valid configuration. The message lists every
 * bad variable by name with the rule it broke; received values are never included, because
 * several variables hold secrets (and URLs may embed passwords).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];
  /** Names of the bad variables, each once, in the order they are reported. */
  readonly variables: string[];

  constructor(issues: readonly ConfigIssue[]) {
    super(`Invalid configuration:\n${formatConfigIssues(issues)}`);
    this.issues = issues;
    this.variables = [...new Set(issues.flatMap((issue) => issue.variable.split(', ')))];
  }
}

/** `  - VAR: rule` lines, one per issue. */
export function formatConfigIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((issue) => `  - ${issue.variable}: ${issue.rule}`).join('\n');
}
