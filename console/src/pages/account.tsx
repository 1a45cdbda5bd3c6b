import { type FormEvent, useState } from 'react';
import { useLocation } from 'wouter';
import { api, must } from '../api/client';
import { useMe, useSession } from '../session';
import { Field, PageTitle } from '../ui/bits';
import { useAction } from '../ui/load';
import { ErrorNote, fieldError } from '../ui/problem';

export function Account() {
  const me = useMe();
  const { reload } = useSession();
  const [, navigate] = useLocation();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const { error, busy, run, setError } = useAction();

  async function change(event: FormEvent) {
    event.preventDefault();
    if (next !== again) return setError(new Error('the two new passwords differ'));
    const done = await run(async () => {
      await must(api.POST('/api/v1/auth/password/', { body: { current_password: current, new_password: next } }));
      return true;
    });
    // The change ends every session, this one too: sign in again with the new password.
    if (done) {
      await reload();
      navigate('/sign-in/?changed=1');
    }
  }

  return (
    <>
      <PageTitle title="Your account" />
      <dl className="facts">
        <dt>Username</dt>
        <dd>{me.username}</dd>
        <dt>E-mail</dt>
        <dd>{me.email}</dd>
        <dt>Role</dt>
        <dd>{me.role}</dd>
        <dt>Organization</dt>
        <dd>{me.organization.name}</dd>
      </dl>
      <form className="panel" onSubmit={change} aria-labelledby="password-title">
        <h2 id="password-title">Change your password</h2>
        <p className="muted">12 characters at least, not your username, not in a known breach. Every session of yours ends: you sign in again.</p>
        <Field label="Current password" error={fieldError(error, 'current_password')}>
          <input type="password" required autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} />
        </Field>
        <Field label="New password" error={fieldError(error, 'new_password')}>
          <input type="password" required minLength={12} autoComplete="new-password" value={next} onChange={(e) => setNext(e.target.value)} />
        </Field>
        <Field label="New password again">
          <input type="password" required minLength={12} autoComplete="new-password" value={again} onChange={(e) => setAgain(e.target.value)} />
        </Field>
        <ErrorNote error={error} action="change your password" />
        <button type="submit" className="primary" disabled={busy}>
          Change password
        </button>
      </form>
    </>
  );
}
