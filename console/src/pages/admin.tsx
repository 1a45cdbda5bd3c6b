import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useEffect, useState } from 'react';
import { api, type Item, must } from '../api/client';
import { can, type Me, useMe } from '../session';
import { Card, Choice, Field, PageTitle, When } from '../ui/bits';
import { query } from '../ui/format';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

type User = Item<'/api/v1/users/'>;
type Entry = Item<'/api/v1/audit-log/'>;
const ROLES = ['viewer', 'analyst', 'admin', 'owner'] as const;
const PLANS = ['starter', 'professional', 'enterprise'] as const;
const PAGE_SIZE = 25;

function Users({ me }: { me: Me }) {
  const users = useLoad(() => must(api.GET('/api/v1/users/', { params: { query: { page_size: 500, ordering: 'created_at' } } })), []);
  const [draft, setDraft, clearDraft] = useDraft('user-new', { username: '', email: '', role: 'analyst' });
  const [password, setPassword] = useState('');
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();

  async function patch(user: User, body: { role?: User['role']; is_active?: boolean }) {
    if (await run(() => must(api.PATCH('/api/v1/users/{id}/', { params: { path: { id: user.id } }, body })))) {
      setSaid(body.role ? `${user.username} is now ${body.role}.` : `${user.username} is ${body.is_active ? 'active again' : 'deactivated: signed out everywhere'}.`);
      users.reload();
    }
  }
  async function create(event: FormEvent) {
    event.preventDefault();
    const made = await run(() => must(api.POST('/api/v1/users/', { body: { username: draft.username, email: draft.email, password, role: draft.role as User['role'] } })));
    if (made) {
      clearDraft();
      setPassword('');
      setSaid(`${made.username} added.`);
      users.reload();
    }
  }

  const col = createColumnHelper<User>();
  const columns = [
    col.accessor('username', { header: 'Username' }),
    col.accessor('email', { header: 'E-mail' }),
    col.accessor('role', {
      header: 'Role',
      cell: (c) => (
        <select aria-label={`Role of ${c.row.original.username}`} value={c.getValue()} disabled={c.row.original.id === me.id} onChange={(e) => void patch(c.row.original, { role: e.target.value as User['role'] })}>
          {ROLES.filter((r) => can(me, r)).map((r) => (
            <option key={r}>{r}</option>
          ))}
        </select>
      ),
    }),
    col.accessor('is_active', { header: 'Active', cell: (c) => (c.getValue() ? 'yes' : 'no') }),
    col.accessor('last_login_at', { header: 'Last sign-in', cell: (c) => <When at={c.getValue()} /> }),
    col.display({
      id: 'active',
      header: 'Action',
      cell: (c) =>
        c.row.original.id === me.id ? null : (
          <button type="button" className="small" onClick={() => void patch(c.row.original, { is_active: !c.row.original.is_active })}>
            {c.row.original.is_active ? 'Deactivate' : 'Reactivate'} <span className="sr-only">{c.row.original.username}</span>
          </button>
        ),
    }),
  ];

  return (
    <Card title="Users and roles">
      <LoadState loading={users.loading && !users.data} error={users.error} what="users" />
      {users.data && <DataTable caption="Users" rows={users.data.results} columns={columns} />}
      <p aria-live="polite" className="said">
        {said}
      </p>
      <form onSubmit={create} aria-label="Add a user">
        <h3>Add a user</h3>
        <Field label="Username" error={fieldError(error, 'username')}>
          <input required autoComplete="off" value={draft.username} onChange={(e) => setDraft({ username: e.target.value })} />
        </Field>
        <Field label="E-mail" error={fieldError(error, 'email')}>
          <input required type="email" value={draft.email} onChange={(e) => setDraft({ email: e.target.value })} />
        </Field>
        <Field label="First password" error={fieldError(error, 'password')} hint="12 characters at least; they change it on first sign-in">
          <input required type="password" autoComplete="new-password" minLength={12} value={password} onChange={(e) => setPassword(e.target.value)} />
        </Field>
        <Choice label="Role" error={fieldError(error, 'role')} value={draft.role} onChange={(v) => setDraft({ role: v })} options={ROLES.filter((r) => can(me, r))} />
        <button type="submit" disabled={busy}>
          Add user
        </button>
      </form>
      <ErrorNote error={error} action="manage users" />
    </Card>
  );
}

function Organization({ me }: { me: Me }) {
  const org = useLoad(() => must(api.GET('/api/v1/organization/')), []);
  const [name, setName] = useState('');
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  useEffect(() => {
    if (org.data) setName(org.data.name);
  }, [org.data]);

  async function patch(body: { name?: string; plan?: (typeof PLANS)[number] }) {
    if (await run(() => must(api.PATCH('/api/v1/organization/', { body })))) {
      setSaid('Saved.');
      org.reload();
    }
  }
  return (
    <Card title="Organization and plan">
      <LoadState loading={org.loading && !org.data} error={org.error} what="the organization" />
      {org.data && (
        <>
          <p>
            {org.data.member_count} members · {org.data.plan} plan · {org.data.rate_limit_per_minute.toLocaleString()} requests a minute
          </p>
          <form
            className="inline-form"
            onSubmit={(e) => {
              e.preventDefault();
              void patch({ name });
            }}
          >
            <Field label="Name" error={fieldError(error, 'name')}>
              <input required value={name} onChange={(e) => setName(e.target.value)} />
            </Field>
            <button type="submit" disabled={busy}>
              Rename
            </button>
          </form>
          {can(me, 'owner') ? (
            <Choice label="Plan" value={org.data.plan} onChange={(v) => void patch({ plan: v as (typeof PLANS)[number] })} options={[...PLANS]} />
          ) : (
            <p className="muted">Only an owner changes the plan.</p>
          )}
        </>
      )}
      <p aria-live="polite" className="said">
        {said}
      </p>
      <ErrorNote error={error} action="change the organization" />
    </Card>
  );
}

function AuditLog() {
  const [filters, setFilters] = useQueryState(['action', 'target_type', 'actor', 'created_after'] as const);
  // Who did it, by name: the organization's users (an entry by no user is the system's).
  const users = useLoad(() => must(api.GET('/api/v1/users/', { params: { query: { page_size: 500 } } })), []);
  const names = new Map((users.data?.results ?? []).map((u) => [u.id, u.username]));
  const log = useLoad(() => must(api.GET('/api/v1/audit-log/', { params: { query: { ...query({ action: filters.action, target_type: filters.target_type, actor: filters.actor, created_after: filters.created_after }), page: filters.page, page_size: PAGE_SIZE } } })), [filters]);
  const col = createColumnHelper<Entry>();
  const columns = [
    col.accessor('created_at', { header: 'When', cell: (c) => <When at={c.getValue()} /> }),
    col.accessor('action', { header: 'Action' }),
    col.accessor((e) => `${e.target_type} ${e.target_id ?? ''}`, { id: 'target', header: 'Target' }),
    col.accessor('actor', { header: 'By', cell: (c) => { const id = c.getValue(); return id ? (names.get(id) ?? <code>{id}</code>) : <span className="muted">system</span>; } }),
    col.accessor('ip', { header: 'From' }),
    col.accessor((e) => (e.changes ? Object.keys(e.changes).join(', ') : ''), { id: 'changes', header: 'Changed' }),
  ];
  return (
    <Card title="Audit log">
      <form className="filters" aria-label="Filter the audit log" onSubmit={(e) => e.preventDefault()}>
        <Field label="Action">
          <input value={filters.action} placeholder="e.g. user.updated" onChange={(e) => setFilters({ action: e.target.value })} />
        </Field>
        <Field label="Target type">
          <input value={filters.target_type} placeholder="e.g. monitor" onChange={(e) => setFilters({ target_type: e.target.value })} />
        </Field>
        <Choice label="By" value={filters.actor} onChange={(v) => setFilters({ actor: v })} any="anyone" options={(users.data?.results ?? []).map((u) => [u.id, u.username] as const)} />
        <Field label="Since">
          <input type="date" value={filters.created_after} onChange={(e) => setFilters({ created_after: e.target.value })} />
        </Field>
      </form>
      <LoadState loading={log.loading && !log.data} error={log.error} what="the audit log" />
      {log.data && (
        <>
          <DataTable caption="Audit log" rows={log.data.results} columns={columns} empty="No entry matches." />
          <Pager count={log.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
    </Card>
  );
}

export function Admin() {
  const me = useMe();
  if (!can(me, 'admin')) {
    return (
      <>
        <PageTitle title="Administration" />
        <p className="notice">Administration is for administrators and owners: your role is {me.role}.</p>
      </>
    );
  }
  return (
    <>
      <PageTitle title="Administration" />
      {/* The users' table is wide: a row of its own. */}
      <div className="stack">
        <Users me={me} />
        <Organization me={me} />
        <AuditLog />
      </div>
    </>
  );
}
