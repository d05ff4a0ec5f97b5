import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, setCsrf, type Me, type Role } from './api';
import { Layout } from './components/Layout';
import { AnalyticsOverviewPage, VideoAnalyticsPage } from './pages/Analytics';
import { KeysPage } from './pages/Keys';
import { RestrictionsPage } from './pages/Restrictions';
import { LibraryPage } from './pages/Library';
import { LivePage } from './pages/Live';
import { LoginPage } from './pages/Login';
import { UploadPage } from './pages/Upload';
import { UsagePage } from './pages/Usage';
import { VideoPage } from './pages/Video';
import { VideosPage } from './pages/Videos';
import { WatermarksPage } from './pages/Watermarks';
import { WebhookPage, WebhooksPage } from './pages/Webhooks';
import { navigate, usePath } from './router';
import './styles.css';

/** `role`: the person's in the current workspace; pages leave out what it may not do (docs/dashboard.md, "Roles"). */
function Page({ path, role, person }: { path: string; role: Role; person: Me['person'] }) {
  let m: RegExpExecArray | null;
  if (path === '/' || path === '/videos') return <VideosPage />;
  if ((m = /^\/videos\/([\w-]+)$/.exec(path))) return <VideoPage id={m[1]} />;
  if ((m = /^\/videos\/([\w-]+)\/analytics$/.exec(path))) return <VideoAnalyticsPage id={m[1]} />;
  if (path === '/analytics') return <AnalyticsOverviewPage />;
  if (path === '/upload') return <UploadPage />;
  if (path === '/library') return <LibraryPage />;
  if (path === '/live') return <LivePage />;
  if (path === '/keys') return <KeysPage role={role} person={person} />;
  if (path === '/restrictions') return <RestrictionsPage role={role} />;
  if (path === '/watermarks') return <WatermarksPage role={role} />;
  if (path === '/webhooks') return <WebhooksPage role={role} />;
  if ((m = /^\/webhooks\/([\w-]+)$/.exec(path))) return <WebhookPage id={m[1]} role={role} />;
  if (path === '/usage') return <UsagePage />;
  return <h1>Page not found</h1>;
}

function App() {
  const path = usePath();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const signedIn = (m: Me | null) => {
    if (m) setCsrf(m.csrf_token);
    setMe(m);
  };

  useEffect(() => {
    api<Me | undefined>('GET', '/dashboard/session?if_signed_in=1').then((m) => signedIn(m ?? null), (e) => {
      if (e instanceof ApiError && e.status === 401) signedIn(null);
      else setMe(null);
    });
    const out = () => signedIn(null);
    window.addEventListener('vh:signed-out', out);
    return () => window.removeEventListener('vh:signed-out', out);
  }, []);

  useEffect(() => {
    document.title = `${me ? pageTitle(path) : 'Sign in'} · vidhost`;
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path, me]);

  if (me === undefined) return <p class="loading">Loading…</p>;
  if (!me) return <LoginPage onSignedIn={(m) => signedIn(m)} />;
  const onSwitch = async (workspace_id: string) => {
    signedIn(await api<Me>('PUT', '/dashboard/session/workspace', { workspace_id }));
    navigate('/');
  };
  const onSignOut = async () => {
    await api('DELETE', '/dashboard/session').catch(() => undefined);
    signedIn(null);
  };
  return (
    <Layout me={me} path={path} onSwitch={onSwitch} onSignOut={onSignOut}>
      {/* A key per workspace: switching remounts every page with the new workspace's data. */}
      <Page path={path} role={me.workspaces.find((w) => w.id === me.workspace_id)?.role ?? 'member'} person={me.person} key={`${me.workspace_id}:${path}`} />
    </Layout>
  );
}

function pageTitle(path: string): string {
  const first = path.split('/')[1] || 'videos';
  return first.charAt(0).toUpperCase() + first.slice(1);
}

render(<App />, document.getElementById('app')!);
