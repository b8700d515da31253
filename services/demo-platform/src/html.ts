/** Markup that is already safe to send: the result of the `html` template tag. */
export class SafeHtml {
  constructor(readonly markup: string) {}

  toString(): string {
    return this.markup;
  }
}

/** What may appear in an `html` template: text is escaped, SafeHtml is kept, lists joined. */
export type HtmlValue =
  SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

/**
 * Server-rendered HTML with every interpolated value escaped:
 * html`<p>${userInput}</p>` cannot inject markup, in text or in a quoted attribute.
 * Exchange results carry values chosen by users and admins (issuer, field keys), so every
 * page of the demo platform is written with it.
 */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let markup = strings[0] ?? '';
  values.forEach((value, index) => {
    markup += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(markup);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.markup;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
