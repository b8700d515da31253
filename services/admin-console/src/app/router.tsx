import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from 'react';

/** The console's base path on the gateway. Routes below are relative to it. */
export const BASE = '/admin';
const NAVIGATED = 'admin-console:navigated';

/** The current route: the path below /admin, starting with `/`, plus its query. */
export function currentRoute(): { path: string; query: URLSearchParams } {
  const { pathname, search } = window.location;
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(search) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace === true) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  window.dispatchEvent(new Event(NAVIGATED));
}

/** Re-renders on every navigation (links, back and forward). */
export function useRoute(): { path: string; query: URLSearchParams } {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return route;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** A real link (opens in a new tab with a modifier key) that navigates in place otherwise. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={`${BASE}${to}`} onClick={follow} {...rest} />;
}
