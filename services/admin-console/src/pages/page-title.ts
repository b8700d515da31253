import { useEffect } from 'react';

/** Sets the document title, so each page is named in the tab and for screen readers. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Gateway admin console`;
  }, [title]);
}
