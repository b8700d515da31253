import type { ReactNode } from 'react';
import { ApiProblem } from '../api/client.js';
import { explainProblem } from '../api/explain.js';

/** An error as the admin reads it: the gateway's message and what it means. */
export function ProblemAlert({ problem }: { problem: unknown }) {
  if (problem === undefined || problem === null) return null;
  const lines =
    problem instanceof ApiProblem
      ? explainProblem(problem)
      : [problem instanceof Error ? problem.message : String(problem)];
  return (
    <div className="alert alert-error" role="alert">
      {lines.map((line) => (
        <p key={line}>{line}</p>
      ))}
    </div>
  );
}

/** A result the admin should notice (announced to screen readers). */
export function Notice({ children }: { children: ReactNode }) {
  if (children === undefined || children === null || children === false) return null;
  return (
    <div className="alert alert-notice" role="status">
      {children}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}
