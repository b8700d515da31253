import { createHash } from 'node:crypto';
import { html, SafeHtml } from '../html.js';
import { onboardingPageStyles as styles } from './client/page-styles.js';
import type { OnboardingRequest } from './onboarding-query.js';

// Built outside the template so that formatting the template can never change the bytes the
// CSP allows by hash (see page-layout.ts).
const styleElement = new SafeHtml(`<style>${styles}</style>`);
const styleHash = `'sha256-${createHash('sha256').update(styles).digest('base64')}'`;

/**
 * Headers of the page: scripts only from the service's own origin (the bundled client, no
 * inline script and no eval), the inline stylesheet by hash, requests only to the service
 * and the gateway, no framing, and Trusted Types enforced so that no script can write
 * markup through innerHTML and friends. Nothing is cached.
 */
export function onboardingPageHeaders(gatewayOrigin: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': [
      "default-src 'none'",
      "script-src 'self'",
      `style-src ${styleHash}`,
      `connect-src 'self' ${gatewayOrigin}`,
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
      "require-trusted-types-for 'script'",
      "trusted-types 'none'",
    ].join('; '),
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };
}

/** Headers of the bundled script: its name changes with its content, so it is immutable. */
export const clientScriptHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/javascript; charset=utf-8',
  'cache-control': 'public, max-age=31536000, immutable',
  'x-content-type-options': 'nosniff',
};

export type OnboardingPageModel = {
  request: OnboardingRequest;
  /** The environment's display name, shown under the heading. */
  environmentLabel: string;
  /** The gateway base URL the client calls (`/v1/onboarding/...`, `/v1/auth/resume`). */
  gatewayBaseUrl: string;
  /** Absolute path of the bundled client script. */
  scriptPath: string;
};

/**
 * The page shell. Everything the user sees about the fields is rendered by the client from
 * the gateway's requirements (spec 4.9), through textContent only; the shell hands the
 * client its parameters in data attributes of `#onboarding`.
 */
export function renderOnboardingPage(model: OnboardingPageModel): string {
  const { request } = model;
  const title = request.scope === 'global' ? 'Complete your profile' : 'Complete your sign-up';
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${title}</title>
        ${styleElement}
        <script type="module" src="${model.scriptPath}"></script>
      </head>
      <body>
        <main
          id="onboarding"
          data-gateway="${model.gatewayBaseUrl}"
          data-platform="${request.platformKey}"
          data-resume="${request.resume}"
          data-scope="${request.scope}"
        >
          <h1 id="onboarding-title">${title}</h1>
          <p class="environment">${model.environmentLabel}</p>
          <p id="onboarding-intro">
            ${
              request.scope === 'global'
                ? 'A few details about you are needed before you continue.'
                : 'The application needs a few more details before you continue.'
            }
          </p>
          <div id="onboarding-alert" class="error" role="alert" hidden></div>
          <div id="onboarding-notice" class="notice" role="status" hidden></div>
          <p id="onboarding-loading">Loading…</p>
          <noscript><p class="error">This page needs JavaScript.</p></noscript>
          <form id="onboarding-form" novalidate hidden>
            <div id="onboarding-fields"></div>
            <button id="onboarding-submit" type="submit">Continue</button>
          </form>
        </main>
      </body>
    </html> `.markup;
}
