import { useEffect, useState, type ReactNode } from 'react';
import { ProblemAlert } from '../ui/alerts.js';
import { AuditPage } from '../pages/audit-page.js';
import { EnvironmentPage, EnvironmentsPage } from '../pages/environments-page.js';
import { OnboardingPage } from '../pages/onboarding-page.js';
import { PlatformPage } from '../pages/platform-page.js';
import { NewPlatformPage, PlatformsPage } from '../pages/platforms-page.js';
import { UsersPage } from '../pages/users-page.js';
import { Link, useRoute } from './router.js';
import { signOut, useSession, type Session } from './session.js';

const SIGN_IN_URL = '/admin/sign-in';

export function App() {
  const { session } = useSession();
  if (session.state === 'loading') {
    return (
      <Shell title="Admin console">
        <p role="status">Checking your session…</p>
      </Shell>
    );
  }
  if (session.state === 'signed-out') return <SignInPage ended={session.ended} />;
  if (session.state === 'no-access') return <NoAccessPage email={session.email} />;
  if (session.state === 'failed') {
    return (
      <Shell title="Admin console">
        <ProblemAlert problem={session.problem} />
        <p>
          <a href="/admin/">Try again</a>
        </p>
      </Shell>
    );
  }
  return <AdminLayout session={session} />;
}

function Shell({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Gateway admin console`;
  }, [title]);
  return (
    <main className="narrow" id="main">
      <h1>{title}</h1>
      {children}
    </main>
  );
}

function SignInPage({ ended }: { ended: boolean }) {
  return (
    <Shell title="Sign in to the admin console">
      {ended ? (
        <p className="alert alert-notice" role="status">
          Your session has ended.
        </p>
      ) : null}
      <p>
        The console manages the gateway's platforms, keys, identity environments, users, onboarding
        fields and audit log. Sign in with an account of the deployment identity environment that
        holds the <code>platform_admin</code> role.
      </p>
      <a className="button primary" href={SIGN_IN_URL}>
        Sign in
      </a>
    </Shell>
  );
}

function NoAccessPage({ email }: { email: string }) {
  return (
    <Shell title="No access">
      <p>
        You are signed in as <strong>{email}</strong>, but this session cannot use the admin
        console.
      </p>
      <ul>
        <li>
          The account needs the <code>platform_admin</code> role in the deployment environment;
          another admin can grant it under Users.
        </li>
        <li>
          A session from signing in to another application never carries admin rights: if you are an
          admin, sign in through the console.
        </li>
        <li>A role granted after you signed in applies from your next sign-in.</li>
      </ul>
      <div className="actions">
        <a className="button primary" href={SIGN_IN_URL}>
          Sign in through the console
        </a>
        <SignOutButton />
      </div>
    </Shell>
  );
}

function SignOutButton() {
  const [problem, setProblem] = useState<unknown>();
  return (
    <>
      <button
        type="button"
        className="secondary"
        onClick={() => {
          setProblem(undefined);
          signOut().catch(setProblem);
        }}
      >
        Sign out
      </button>
      <ProblemAlert problem={problem} />
    </>
  );
}

const NAVIGATION: readonly { to: string; label: string; area: string }[] = [
  { to: '/', label: 'Platforms', area: 'platforms' },
  { to: '/environments', label: 'Identity environments', area: 'environments' },
  { to: '/users', label: 'Users', area: 'users' },
  { to: '/onboarding', label: 'Onboarding fields', area: 'onboarding' },
  { to: '/audit', label: 'Audit log', area: 'audit' },
];

function AdminLayout({ session }: { session: Extract<Session, { state: 'admin' }> }) {
  const route = useRoute();
  const segments = route.path.split('/').filter((segment) => segment !== '');
  const area = segments[0] === undefined || segments[0] === 'platforms' ? 'platforms' : segments[0];
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Gateway admin console</span>
        <nav aria-label="Areas">
          <ul>
            {NAVIGATION.map((item) => (
              <li key={item.to}>
                <Link to={item.to} aria-current={item.area === area ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="who">
          {session.email} <SignOutButton />
        </div>
      </header>
      <main id="main">{pageOf(segments, route.query, session)}</main>
    </>
  );
}

function pageOf(
  segments: readonly string[],
  query: URLSearchParams,
  session: Extract<Session, { state: 'admin' }>,
): ReactNode {
  const [area, key] = segments;
  switch (area) {
    case undefined:
    case 'platforms':
      if (key === 'new') return <NewPlatformPage />;
      if (key !== undefined) return <PlatformPage platformKey={key} />;
      return <PlatformsPage />;
    case 'environments':
      return key === undefined ? <EnvironmentsPage /> : <EnvironmentPage environmentKey={key} />;
    case 'users':
      return <UsersPage selfId={session.userId} />;
    case 'onboarding':
      return <OnboardingPage platformKey={key} />;
    case 'audit':
      return <AuditPage initialTarget={query.get('target') ?? ''} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            The console has no such page. <Link to="/">Go to the platforms.</Link>
          </p>
        </>
      );
  }
}
