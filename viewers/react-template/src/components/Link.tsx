// Link.tsx: a link to another view of this app. Its href is only a query string (`?bundle=...`),
// so it can open in a new tab, but never points outside the app, whatever the trace contains.
import type { CSSProperties, MouseEvent, ReactNode } from 'react';
import { navigate, routeHref, type Route } from '../route';

interface LinkProps {
  to: Route;
  className?: string;
  title?: string;
  style?: CSSProperties;
  children: ReactNode;
}

export function Link({ to, className, title, style, children }: LinkProps) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault(); // a plain click: change the view without reloading the page
    navigate(to);
  };
  return (
    <a href={routeHref(to)} className={className} title={title} style={style} onClick={onClick}>{children}</a>
  );
}
