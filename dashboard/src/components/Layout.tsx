import type { ComponentChildren } from 'preact';
import type { Me } from '../api';
import { Link } from './ui';

const NAV: Array<[string, string]> = [
  ['/', 'Videos'],
  ['/upload', 'Upload'],
  ['/library', 'Folders & tags'],
  ['/live', 'Live'],
  ['/keys', 'API Keys'],
  ['/restrictions', 'Restrictions'],
  ['/watermarks', 'Watermarks'],
  ['/webhooks', 'Webhooks'],
  ['/analytics', 'Analytics'],
  ['/usage', 'Usage'],
];

export function Layout(props: { me: Me; path: string; onSwitch: (ws: string) => void; onSignOut: () => void; children: ComponentChildren }) {
  const { me, path } = props;
  const current = (to: string) => (to === '/' ? path === '/' || path.startsWith('/videos') : path.startsWith(to));
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">vidhost</strong>
        <label class="switcher">
          <span>Workspace</span>
          <select value={me.workspace_id ?? ''} onChange={(e) => props.onSwitch((e.target as HTMLSelectElement).value)}>
            {me.workspaces.map((w) => (
              <option value={w.id} key={w.id}>
                {w.name} ({w.role})
              </option>
            ))}
          </select>
        </label>
        <span class="who">{me.person.email}</span>
        <button type="button" class="secondary" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <nav aria-label="Sections">
        <ul>
          {NAV.map(([to, label]) => (
            <li key={to}>
              <Link to={to} class={current(to) ? 'active' : undefined} current={current(to)}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </>
  );
}
