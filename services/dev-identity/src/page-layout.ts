import { createHash } from 'node:crypto';
import { html, SafeHtml } from './html.js';

// One small stylesheet for every page of the service, inlined so a page is one response.
const styles = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:#f4f5f7;color:#1f2328}
main{max-width:26rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
h1{font-size:1.4rem;margin:0 0 .25rem}
.environment{margin:0 0 1.5rem;color:#57606a;font-size:.9rem}
label{display:block;margin:1rem 0 .25rem;font-weight:600}
input{width:100%;padding:.55rem .7rem;border:1px solid #d0d7de;border-radius:.4rem;font:inherit}
button{margin-top:1.5rem;width:100%;padding:.65rem;border:0;border-radius:.4rem;background:#0969da;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button.secondary{background:none;color:#57606a;margin-top:.5rem;text-decoration:underline}
.error{margin:1rem 0;padding:.6rem .8rem;border-radius:.4rem;background:#ffebe9;color:#82071e}
.hint{margin:.25rem 0 0;color:#57606a;font-size:.875rem}
.field-error{margin:.25rem 0 0;color:#82071e;font-size:.9rem;font-weight:600}
input[aria-invalid=true]{border-color:#cf222e}
.notice{margin:1rem 0;padding:.6rem .8rem;border-radius:.4rem;background:#dafbe1;color:#116329}
.switch{margin-top:1.5rem;text-align:center;font-size:.95rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
a{color:#0969da}
`;

/** Submits the sign-out form at once; the button stays as the fallback without scripts. */
const autoSubmitLogoutScript = "document.getElementById('op.logoutForm').submit();";

// Whole elements, built outside the templates so that formatting a template can never change
// their content: the CSP below allows exactly these bytes by hash.
const styleElement = new SafeHtml(`<style>${styles}</style>`);
const scriptElement = new SafeHtml(`<script>${autoSubmitLogoutScript}</script>`);

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * Headers for every page: nothing loads but the inline stylesheet (and the sign-out script,
 * by hash), the page cannot be framed, and nothing is cached.
 */
export const pageHeaders: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': [
    "default-src 'none'",
    `style-src ${sha256(styles)}`,
    `script-src ${sha256(autoSubmitLogoutScript)}`,
    'img-src https: data:',
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export type PageOptions = {
  title: string;
  /** Shown under the title, e.g. the environment's display name. */
  subtitle?: string;
  /** Adds the script that submits the sign-out form (`op.logoutForm`) without a click. */
  autoSubmitLogout?: boolean;
};

export function renderPage(options: PageOptions, content: SafeHtml): string {
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>${options.title}</title>
        ${styleElement}
      </head>
      <body>
        <main>
          <h1>${options.title}</h1>
          ${options.subtitle === undefined ? '' : html`<p class="environment">${options.subtitle}</p>`}
          ${content}
        </main>
        ${options.autoSubmitLogout === true ? scriptElement : ''}
      </body>
    </html> `.markup;
}

/** What a form shows beside one field: its rule, and what was wrong with the value sent. */
export type FieldNotes = { hint?: string | undefined; error?: string | SafeHtml | undefined };

/**
 * The attributes that tie an input to its notes (`fieldNotes` with the same id), for screen
 * readers, and mark it invalid when the server refused its value.
 */
export function describedBy(id: string, notes: FieldNotes): SafeHtml {
  const ids = [
    notes.hint === undefined ? undefined : `${id}-hint`,
    notes.error === undefined ? undefined : `${id}-error`,
  ].filter((noteId) => noteId !== undefined);
  if (ids.length === 0) return html``;
  const invalid = notes.error === undefined ? '' : html` aria-invalid="true"`;
  return html`aria-describedby="${ids.join(' ')}"${invalid}`;
}

/** The notes of one field, rendered right below its input. */
export function fieldNotes(id: string, notes: FieldNotes): SafeHtml {
  return html`${
    notes.hint === undefined ? '' : html`<p class="hint" id="${id}-hint">${notes.hint}</p>`
  }${
    notes.error === undefined
      ? ''
      : html`<p class="field-error" id="${id}-error" role="alert">${notes.error}</p>`
  }`;
}
