// What the admin console's live preview of the onboarding page uses: the page's own
// requirement reading, field rendering, value checks and stylesheet, so the preview looks and
// validates as the page does.
export { checkValues } from './form-values.js';
export { renderFields } from './onboarding-form.js';
export { onboardingPageStyles } from './page-styles.js';
export { readRequirements } from './requirements.js';
export type { Requirement, Requirements } from './requirements.js';
