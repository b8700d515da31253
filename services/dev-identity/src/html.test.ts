import { describe, expect, it } from '@jest/globals';
import { html, SafeHtml } from './html.js';

describe('html', () => {
  it('escapes interpolated text, in content and in quoted attributes', () => {
    const value = `<img src=x onerror="alert('1')">&`;
    expect(html`<p title="${value}">${value}</p>`.markup).toBe(
      '<p title="&#60;img src=x onerror=&#34;alert(&#39;1&#39;)&#34;&#62;&#38;">&#60;img src=x onerror=&#34;alert(&#39;1&#39;)&#34;&#62;&#38;</p>',
    );
  });

  it('keeps nested html, joins lists and drops empty values', () => {
    const items = ['a<b', 'c'].map((item) => html`<li>${item}</li>`);
    // prettier-ignore
    const markup = html`<ul>${items}</ul>${undefined}${null}${false}${0}`.markup;
    expect(markup).toBe('<ul><li>a&#60;b</li><li>c</li></ul>0');
    expect(html`${new SafeHtml('<br>')}`.toString()).toBe('<br>');
  });
});
