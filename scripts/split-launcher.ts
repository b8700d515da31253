import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

export type SplitPorts = { edge: number; registry: number; authFlow: number; onboarding: number };

export type SplitDeployment = {
  processes: Record<keyof SplitPorts, ChildProcess> & {
    extraEdges: ChildProcess[];
    extraAuthFlows: ChildProcess[];
  };
  /** Sends SIGTERM to every process and waits for them to exit. */
  stop(): Promise<void>;
};

/**
 * Starts the split deployment locally: registry, auth-flow and onboarding as their own
 * HTTP/2 Connect processes, and the edge reaching them over the network. Each runs from
 * TypeScript sources with tsx, exactly as its container would run its compiled main.
 */
export function startSplitDeployment(options: {
  ports: SplitPorts;
  /** More edge instances, stateless like the first (scale-out). */
  extraEdgePorts?: number[];
  /**
   * More auth-flow instances (scale-out). The edge's AUTH_FLOW_SERVICE_URL names
   * one instance, so the i-th extra edge is pointed at the i-th extra auth-flow when there
   * is one (docs/decisions.md); the rest use the first auth-flow.
   */
  extraAuthFlowPorts?: number[];
  env: NodeJS.ProcessEnv;
  onLine?: (service: string, line: string) => void;
}): SplitDeployment {
  const { ports, env } = options;
  const serviceEnv = {
    ...env,
    REGISTRY_SERVICE_URL: internal(ports.registry),
    AUTH_FLOW_SERVICE_URL: internal(ports.authFlow),
    ONBOARDING_SERVICE_URL: internal(ports.onboarding),
  };
  const start = (name: string, entry: string, port: number, overrides: NodeJS.ProcessEnv = {}) =>
    startService(
      { name, entry, env: { ...serviceEnv, ...overrides, PORT: String(port) } },
      options.onLine,
    );
  const processes = {
    registry: start('registry', 'services/registry/src/main.ts', ports.registry),
    authFlow: start('auth-flow', 'services/auth-flow/src/main.ts', ports.authFlow),
    onboarding: start('onboarding', 'services/onboarding/src/main.ts', ports.onboarding),
    edge: start('edge', 'services/edge/src/main.ts', ports.edge),
    extraAuthFlows: (options.extraAuthFlowPorts ?? []).map((port, index) =>
      start(`auth-flow-${index + 2}`, 'services/auth-flow/src/main.ts', port),
    ),
    extraEdges: (options.extraEdgePorts ?? []).map((port, index) => {
      const authFlowPort = options.extraAuthFlowPorts?.[index];
      return start(
        `edge-${index + 2}`,
        'services/edge/src/main.ts',
        port,
        authFlowPort === undefined ? {} : { AUTH_FLOW_SERVICE_URL: internal(authFlowPort) },
      );
    }),
  };
  return {
    processes,
    stop: () =>
      Promise.all(
        [
          processes.registry,
          processes.authFlow,
          processes.onboarding,
          processes.edge,
          ...processes.extraEdges,
          ...processes.extraAuthFlows,
        ].map(stopProcess),
      ).then(() => undefined),
  };
}

const internal = (port: number) => `http://127.0.0.1:${port}`;

/** One service from its TypeScript entry with tsx; each line it prints goes to `onLine`. */
function startService(
  service: { name: string; entry: string; env: NodeJS.ProcessEnv },
  onLine: ((service: string, line: string) => void) | undefined,
): ChildProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=@gateway/source', '--import', 'tsx', service.entry],
    {
      cwd: root,
      env: service.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    createInterface({ input: stream }).on('line', (line) => onLine?.(service.name, line));
  }
  return child;
}

/** Sends SIGTERM unless the process has exited, and waits for it to exit. */
function stopProcess(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
