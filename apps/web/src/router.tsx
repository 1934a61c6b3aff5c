import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from "react";

/** A small history router: the server answers every console path with index.html. */
const listeners = new Set<() => void>();

export const navigate = (to: string, replace = false) => {
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  listeners.forEach((listener) => listener());
};

export type Location = { pathname: string; search: URLSearchParams };

const current = (): Location => ({
  pathname: window.location.pathname,
  search: new URLSearchParams(window.location.search),
});

export const useLocation = (): Location => {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return location;
};

/** Update query parameters of the current page in place (filters, selected folder). */
export const setSearch = (changes: Record<string, string | undefined>) => {
  const params = new URLSearchParams(window.location.search);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined || value === "") params.delete(key);
    else params.set(key, value);
  }
  const query = params.toString();
  navigate(`${window.location.pathname}${query ? `?${query}` : ""}`, true);
};

export const Link = ({ href, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) => {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(href);
  };
  return <a href={href} onClick={handle} {...rest} />;
};
