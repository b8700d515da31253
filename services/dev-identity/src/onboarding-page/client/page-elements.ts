// The elements of the page shell (onboarding-document.ts) the client works with.

export type PageConfig = {
  gatewayBaseUrl: string;
  platformKey: string;
  /** The authentication transaction to resume (spec 4.3). */
  resume: string;
  scope: 'global' | 'platform';
};

export type PageElements = {
  title: HTMLElement;
  intro: HTMLElement;
  alert: HTMLElement;
  notice: HTMLElement;
  loading: HTMLElement;
  form: HTMLFormElement;
  fields: HTMLElement;
  submit: HTMLButtonElement;
};

function required<T extends HTMLElement>(doc: Document, id: string, type: { new (): T }): T {
  const found = doc.getElementById(id);
  if (!(found instanceof type)) throw new Error(`The page has no #${id}`);
  return found;
}

export function findPageElements(doc: Document): { config: PageConfig; elements: PageElements } {
  const root = required(doc, 'onboarding', HTMLElement);
  const data = root.dataset;
  return {
    config: {
      gatewayBaseUrl: data.gateway ?? '',
      platformKey: data.platform ?? '',
      resume: data.resume ?? '',
      scope: data.scope === 'global' ? 'global' : 'platform',
    },
    elements: {
      title: required(doc, 'onboarding-title', HTMLElement),
      intro: required(doc, 'onboarding-intro', HTMLElement),
      alert: required(doc, 'onboarding-alert', HTMLElement),
      notice: required(doc, 'onboarding-notice', HTMLElement),
      loading: required(doc, 'onboarding-loading', HTMLElement),
      form: required(doc, 'onboarding-form', HTMLFormElement),
      fields: required(doc, 'onboarding-fields', HTMLElement),
      submit: required(doc, 'onboarding-submit', HTMLButtonElement),
    },
  };
}

/** Shows `lines` in a message box (one paragraph each), or hides it when there are none. */
export function showMessage(box: HTMLElement, lines: readonly string[]): void {
  box.replaceChildren(
    ...lines.map((line) => {
      const paragraph = box.ownerDocument.createElement('p');
      paragraph.textContent = line;
      return paragraph;
    }),
  );
  box.hidden = lines.length === 0;
}
