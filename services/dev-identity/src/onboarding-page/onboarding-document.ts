import { createHash } from 'node:crypto';
import { html, SafeHtml } from '../html.js';
import type { OnboardingRequest } from './onboarding-query.js';

// The stylesheet of the onboarding page, inlined and allowed by hash. Fields sit on a grid of
// six columns: uiConfig.width full, half and third span 6, 3 and 2 (spec 2.13); narrow
// screens stack them.
const styles = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}
main{max-width:44rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 .25rem}
h2{font-size:1.1rem;margin:1.5rem 0 0;padding-top:1rem;border-top:1px solid #d0d7de}
#onboarding-fields>section:first-child h2{margin-top:.5rem;padding-top:0;border-top:0}
.environment{margin:0 0 1rem;color:#57606a;font-size:.9rem}
.section{display:grid;grid-template-columns:repeat(6,minmax(0,1fr));gap:0 1rem}
.field{grid-column:span 6;margin-top:1rem;min-width:0}
.field.half{grid-column:span 3}
.field.third{grid-column:span 2}
@media (max-width:36rem){.field.half,.field.third{grid-column:span 6}}
fieldset{margin:0;padding:0;border:0;min-width:0}
label,legend{display:block;margin:0 0 .25rem;padding:0;font-weight:600}
.choice{display:flex;align-items:center;gap:.5rem;margin:.15rem 0;font-weight:400}
.choice input{width:auto;margin:0}
.choices-inline{display:flex;gap:1.5rem}
.required{color:#cf222e;margin-left:.2rem}
.description,.help{margin:.25rem 0 0;color:#57606a;font-size:.9rem}
input,select,textarea{width:100%;padding:.55rem .7rem;border:1px solid #d0d7de;border-radius:.4rem;font:inherit;background:#fff}
textarea{min-height:6rem;resize:vertical}
input.country{text-transform:uppercase;max-width:8rem}
input.country::placeholder{text-transform:none}
[aria-invalid="true"]{border-color:#cf222e}
.field-error{margin:.25rem 0 0;color:#82071e;font-size:.9rem}
button{margin-top:1.5rem;width:100%;padding:.65rem;border:0;border-radius:.4rem;background:#0969da;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button:disabled{opacity:.6;cursor:progress}
.error{margin:1rem 0;padding:.6rem .8rem;border-radius:.4rem;background:#ffebe9;color:#82071e}
.notice{margin:1rem 0;padding:.6rem .8rem;border-radius:.4rem;background:#ddf4ff;color:#0a3069}
.error p,.notice p{margin:0}.error p+p,.notice p+p{margin-top:.25rem}
[hidden]{display:none!important}
`;

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
