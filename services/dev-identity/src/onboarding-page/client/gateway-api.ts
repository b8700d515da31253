// The gateway endpoints the page calls (spec 4.9, 4.3). The user is authenticated by the
// gateway's HttpOnly cookie `svc_auth_session`, so every request carries credentials; the
// gateway is same-site with the identity UI (its CORS allowlist includes the issuer's host).

import type { FieldValue } from '@gateway/field-rules';

/** An error answer: the body `{ code, message, details? }` of spec 7 and the status. */
export type GatewayProblem = {
  status: number;
  code: string;
  message: string;
  details?: unknown;
};

export type GatewayAnswer = { ok: true; body: unknown } | { ok: false; problem: GatewayProblem };

export type OnboardingValues = {
  requirementVersion: number;
  values: Record<string, FieldValue>;
};

export type GatewayApi = {
  requirements(): Promise<GatewayAnswer>;
  putValues(values: OnboardingValues): Promise<GatewayAnswer>;
  /** Platform scope: `POST .../complete`; 200 `{ status: 'COMPLETE' }`, 409 while missing. */
  complete(): Promise<GatewayAnswer>;
  /** Global scope: `GET /v1/onboarding/global/status`. */
  globalStatus(): Promise<GatewayAnswer>;
  /** `GET /v1/auth/resume?transaction=<id>` (spec 4.3), where the browser goes next. */
  resumeUrl(transactionId: string): string;
};

export type GatewayApiOptions = {
  /** The gateway's base URL, without a trailing slash. */
  gatewayBaseUrl: string;
  platformKey: string;
  scope: 'global' | 'platform';
  fetch?: typeof fetch;
};

const unreachable: GatewayProblem = {
  status: 0,
  code: 'NETWORK_ERROR',
  message: 'The sign-in service could not be reached. Check your connection and try again.',
};

export function createGatewayApi(options: GatewayApiOptions): GatewayApi {
  const base = options.gatewayBaseUrl.replace(/\/+$/, '');
  const send = options.fetch ?? ((input, init) => fetch(input, init));
  const onboarding = `${base}/v1/onboarding/${
    options.scope === 'global' ? 'global' : encodeURIComponent(options.platformKey)
  }`;

  const call = async (url: string, init: RequestInit = {}): Promise<GatewayAnswer> => {
    let response: Response;
    try {
      response = await send(url, {
        ...init,
        credentials: 'include',
        headers: { accept: 'application/json', ...(init.headers as Record<string, string>) },
      });
    } catch {
      return { ok: false, problem: unreachable };
    }
    const body = await readJson(response);
    if (response.ok) return { ok: true, body };
    return { ok: false, problem: problemOf(response.status, body) };
  };
  const json = (method: string, body: unknown): RequestInit => ({
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  return {
    requirements: () => call(`${onboarding}/requirements`),
    putValues: (values) => call(`${onboarding}/values`, json('PUT', values)),
    complete: () => call(`${onboarding}/complete`, json('POST', {})),
    globalStatus: () => call(`${base}/v1/onboarding/global/status`),
    resumeUrl: (transactionId) =>
      `${base}/v1/auth/resume?transaction=${encodeURIComponent(transactionId)}`,
  };
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

function problemOf(status: number, body: unknown): GatewayProblem {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const message = typeof fields.message === 'string' && fields.message !== '' ? fields.message : '';
  return {
    status,
    code: typeof fields.code === 'string' ? fields.code : `HTTP_${status}`,
    message: message || `The sign-in service answered ${status}. Try again.`,
    ...(fields.details === undefined ? {} : { details: fields.details }),
  };
}
