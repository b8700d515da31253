import type { ServerResponse } from 'node:http';
import { sendPage } from '../http-io.js';
import { renderErrorPage } from '../provider-pages.js';
import { onboardingClientBundle } from './client-bundle.js';
import {
  clientScriptHeaders,
  onboardingPageHeaders,
  renderOnboardingPage,
} from './onboarding-document.js';
import { readOnboardingQuery } from './onboarding-query.js';

/**
 * `/env/<KEY>/onboarding` (spec 4.2 step 8, 4.9): the identity UI's onboarding page, and
 * `/env/<KEY>/onboarding/assets/onboarding-<hash>.js`, its bundled browser script.
 */
export const onboardingPath = /^\/env\/([^/]+)\/onboarding(?:\/assets\/([^/]+))?$/;

export type OnboardingPages = {
  /** The page for the environment, or a 400 page when the query is not valid. */
  show(res: ServerResponse, url: URL, environment: OnboardingEnvironment): Promise<void>;
  /** The bundled client script; 404 for any other name (an outdated page asks for one). */
  script(res: ServerResponse, fileName: string): Promise<void>;
};

export type OnboardingEnvironment = { key: string; label: string };

export function createOnboardingPages(options: {
  /** The gateway's public base URL, without a trailing slash. */
  gatewayBaseUrl: string;
}): OnboardingPages {
  const { gatewayBaseUrl } = options;
  const gatewayOrigin = new URL(gatewayBaseUrl).origin;
  return {
    async show(res, url, environment) {
      const query = readOnboardingQuery(url.searchParams);
      if (!query.ok) {
        sendPage(
          res,
          400,
          renderErrorPage({
            environmentLabel: environment.label,
            error: 'This onboarding link is not valid',
            description: query.problem,
          }),
        );
        return;
      }
      const bundle = await onboardingClientBundle();
      res.writeHead(200, onboardingPageHeaders(gatewayOrigin));
      res.end(
        renderOnboardingPage({
          request: query.request,
          environmentLabel: environment.label,
          gatewayBaseUrl,
          scriptPath: `/env/${encodeURIComponent(environment.key)}/onboarding/assets/${bundle.fileName}`,
        }),
      );
    },
    async script(res, fileName) {
      const bundle = await onboardingClientBundle();
      if (fileName !== bundle.fileName) {
        sendPage(res, 404, renderErrorPage({ error: 'Not found' }));
        return;
      }
      res.writeHead(200, clientScriptHeaders);
      res.end(bundle.code);
    },
  };
}
