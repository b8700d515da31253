import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { html } from './html.js';
import { pageHeaders, renderPage } from './page-layout.js';

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

describe('renderPage', () => {
  // Regression: formatting the page template once put whitespace inside <style> and
  // <script>, so the browser refused both (their CSP hashes no longer matched).
  it('serves exactly the inline style and script that the CSP allows by hash', () => {
    const page = renderPage(
      { title: 'Sign out', subtitle: 'Deployment (PROD)', autoSubmitLogout: true },
      html`<p>${'<b>'}</p>`,
    );
    const style = /<style>([\s\S]*?)<\/style>/.exec(page)?.[1] ?? '';
    const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1] ?? '';
    const csp = pageHeaders['content-security-policy'] ?? '';
    expect(csp).toContain(`style-src ${sha256(style)}`);
    expect(csp).toContain(`script-src ${sha256(script)}`);
    expect(csp).toContain("default-src 'none'");
    expect(page).toContain('<p>&#60;b&#62;</p>');
  });

  it('adds no script unless asked', () => {
    expect(renderPage({ title: 'Sign in' }, html``)).not.toContain('<script>');
  });
});
