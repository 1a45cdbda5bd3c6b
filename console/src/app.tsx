import { type ReactNode, useEffect, useState } from 'react';
import { Link, Redirect, Route, Switch, useLocation } from 'wouter';
import { onReach } from './api/client';
import { PAGES } from './pages';
import { can, SessionProvider, signInPath, useSession } from './session';
import { SignIn } from './pages/sign-in';
import { Overview } from './pages/overview';
import { Alerts } from './pages/alerts';
import { AlertDetail } from './pages/alert-detail';
import { LeakSearch } from './pages/leaks';
import { Monitors } from './pages/monitors';
import { MonitorDetail } from './pages/monitor-detail';
import { Incidents } from './pages/incidents';
import { IncidentDetail } from './pages/incident-detail';
import { Tokens } from './pages/tokens';
import { TokenDetail } from './pages/token-detail';
import { Sources } from './pages/sources';
import { Feeds } from './pages/feeds';
import { Integrations } from './pages/integrations';
import { Admin } from './pages/admin';
import { Account } from './pages/account';

/** The menu; `role`: the least role that may open the page (the others do not see it). */
const NAV: Array<{ to: string; text: string; role?: 'analyst' | 'admin' }> = [
  { to: PAGES.overview, text: 'Overview' },
  { to: PAGES.alerts, text: 'Alerts' },
  { to: PAGES.leaks, text: 'Leak search' },
  { to: PAGES.monitors, text: 'Monitors' },
  { to: PAGES.incidents, text: 'Incidents' },
  { to: PAGES.tokens, text: 'Tracking tokens' },
  { to: PAGES.sources, text: 'Sources' },
  { to: PAGES.feeds, text: 'Feeds', role: 'analyst' },
  { to: PAGES.integrations, text: 'Integrations' },
  { to: PAGES.admin, text: 'Administration', role: 'admin' },
];

/** A banner while the server cannot be reached; it goes by itself when the server answers again. */
function Reachability() {
  const [down, setDown] = useState(false);
  useEffect(() => onReach((reach) => setDown(reach === 'down')), []);
  return (
    <div role="status" aria-live="polite" className="reach">
      {down && <div className="banner">threatmon cannot be reached: retrying by itself. What you typed is kept.</div>}
    </div>
  );
}

function Shell({ children }: { children: ReactNode }) {
  const { me, signOut } = useSession();
  const [location] = useLocation();
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [location]);
  if (!me) return null;
  const current = (to: string) => (to === '/' ? location === '/' : location.startsWith(to));
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Reachability />
      <header className="topbar">
        <Link href="/" className="brand">
          <img src="/favicon.svg" alt="" width="24" height="24" /> threatmon
        </Link>
        <button type="button" className="menu-toggle" aria-expanded={open} aria-controls="nav" onClick={() => setOpen(!open)}>
          Menu
        </button>
        <div className="who">
          <Link href={PAGES.account}>
            {me.username} <span className="muted">({me.role}, {me.organization.name})</span>
          </Link>
          <button type="button" className="small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <nav id="nav" className={open ? 'side open' : 'side'} aria-label="Sections">
        <ul>
          {NAV.filter((n) => !n.role || can(me, n.role)).map((n) => (
            <li key={n.to}>
              <Link href={n.to} aria-current={current(n.to) ? 'page' : undefined}>
                {n.text}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

function Guarded() {
  const { me, known } = useSession();
  const [location] = useLocation();
  if (!known) return <p className="muted">Loading…</p>;
  if (!me) return <Redirect to={signInPath(location + window.location.search)} replace />;
  return (
    <Shell>
      <Switch>
        <Route path={PAGES.overview} component={Overview} />
        <Route path={PAGES.alerts} component={Alerts} />
        <Route path={PAGES.alert}>{(p) => <AlertDetail id={p.id} />}</Route>
        <Route path={PAGES.leaks} component={LeakSearch} />
        <Route path={PAGES.monitors} component={Monitors} />
        <Route path={PAGES.monitor}>{(p) => <MonitorDetail id={p.id} />}</Route>
        <Route path={PAGES.incidents} component={Incidents} />
        <Route path={PAGES.incident}>{(p) => <IncidentDetail id={p.id} />}</Route>
        <Route path={PAGES.tokens} component={Tokens} />
        <Route path={PAGES.token}>{(p) => <TokenDetail id={p.id} />}</Route>
        <Route path={PAGES.sources} component={Sources} />
        <Route path={PAGES.feeds} component={Feeds} />
        <Route path={PAGES.integrations} component={Integrations} />
        <Route path={PAGES.admin} component={Admin} />
        <Route path={PAGES.account} component={Account} />
        <Route>
          <h1>Page not found</h1>
          <p>
            <Link href="/">Back to the overview</Link>
          </p>
        </Route>
      </Switch>
    </Shell>
  );
}

export function App() {
  return (
    <SessionProvider>
      <Switch>
        <Route path={PAGES.signIn} component={SignIn} />
        <Route>
          <Guarded />
        </Route>
      </Switch>
    </SessionProvider>
  );
}
