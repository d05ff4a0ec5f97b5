import { useEffect, useState } from 'preact/hooks';

// A few pages under /dashboard/: the History API is enough, no router library.
export const BASE = '/dashboard';

export function navigate(to: string): void {
  history.pushState(null, '', `${BASE}${to}`);
  window.dispatchEvent(new Event('vh:navigate'));
}

export function usePath(): string {
  const read = () => location.pathname.slice(BASE.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const on = () => setPath(read());
    window.addEventListener('popstate', on);
    window.addEventListener('vh:navigate', on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener('vh:navigate', on);
    };
  }, []);
  return path;
}

/** An in-app link: a real <a href> (keyboard, middle click) that navigates without a reload. */
export function onLink(e: MouseEvent): void {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  e.preventDefault();
  navigate(a.getAttribute('href')!.slice(BASE.length) || '/');
}

/** A query parameter of the current address, kept up to date across in-app navigation (`/live?stream=ls_…`). */
export function useQueryParam(name: string): string | null {
  const read = () => new URLSearchParams(location.search).get(name);
  const [value, setValue] = useState(read);
  useEffect(() => {
    const on = () => setValue(read());
    window.addEventListener('popstate', on);
    window.addEventListener('vh:navigate', on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener('vh:navigate', on);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name]);
  return value;
}
