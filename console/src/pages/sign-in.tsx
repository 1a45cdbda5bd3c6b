import { type FormEvent, useState } from 'react';
import { useLocation, useSearch } from 'wouter';
import { useSession } from '../session';
import { ErrorNote } from '../ui/problem';
import { Field } from '../ui/bits';
import { useAction } from '../ui/load';

/** Where to go after signing in: a page of this console only (never another site: an open redirect). */
function nextOf(search: string): string {
  const next = new URLSearchParams(search).get('next') ?? '/';
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

export function SignIn() {
  const { signIn, me } = useSession();
  const [, navigate] = useLocation();
  const search = useSearch();
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const { error, busy, run } = useAction();
  document.title = 'Sign in · threatmon';

  async function submit(event: FormEvent) {
    event.preventDefault();
    const done = await run(async () => {
      await signIn(username, password);
      return true;
    });
    if (done) navigate(nextOf(search), { replace: true });
  }

  return (
    <main id="main" className="sign-in">
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">
          <img src="/favicon.svg" alt="" width="32" height="32" /> Sign in to threatmon
        </h1>
        {me && <p>You are signed in as {me.username}.</p>}
        {new URLSearchParams(search).has('changed') && <p className="notice">Your password is changed and every session ended: sign in with the new one.</p>}
        {new URLSearchParams(search).has('next') && !error && <p className="notice">Your session ended: sign in again to go back where you were. What you were typing is kept.</p>}
        <Field label="Username">
          <input name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} autoFocus />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <ErrorNote error={error} action="sign in" />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        <p className="muted small-print">
          Machines use the API with tokens or API keys: <a href="/api/docs/">API reference</a>.
        </p>
      </form>
    </main>
  );
}
