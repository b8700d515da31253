import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { onboardingPageStyles } from '../dev-identity/src/onboarding-page/client/page-styles.js';

const previewStylesId = 'virtual:onboarding-page-stylesheet';

/**
 * The onboarding page's stylesheet as a file of the build, for the live preview's shadow
 * root (a stylesheet file, so the console's policy needs no inline style). The page's
 * `main` box is the preview's `.onboarding-page`.
 */
function onboardingPageStylesheet(): Plugin {
  return {
    name: 'onboarding-page-stylesheet',
    resolveId: (id) => (id === previewStylesId ? `\0${previewStylesId}` : undefined),
    load(id) {
      if (id !== `\0${previewStylesId}`) return undefined;
      const source = onboardingPageStyles
        .replace(/^main\{/m, '.onboarding-page{')
        .replace(/^body\{/m, ':host{display:block;');
      const file = this.emitFile({ type: 'asset', name: 'onboarding-page.css', source });
      // The module exports the stylesheet's URL (with its content hash).
      return `export default import.meta.ROLLUP_FILE_URL_${file};`;
    },
  };
}

// Vite reads its configuration from the module's default export: the one default export of
// the workspace, demanded by the tool.
// eslint-disable-next-line no-restricted-syntax
export default defineConfig({
  base: '/admin/',
  plugins: [react(), onboardingPageStylesheet()],
  resolve: { conditions: ['@gateway/source'] },
  build: {
    outDir: 'dist/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // Every script and stylesheet is a file: the console's policy allows no inline code.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
