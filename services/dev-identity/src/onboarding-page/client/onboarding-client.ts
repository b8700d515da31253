// The browser entry of the onboarding page, bundled with esbuild (../client-bundle.ts) and
// served as `/env/<KEY>/onboarding/assets/onboarding-<hash>.js`.

import { startOnboarding } from './onboarding-flow.js';

startOnboarding({ doc: document, navigate: (url) => window.location.assign(url) });
