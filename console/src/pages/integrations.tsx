import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useState } from 'react';
import { api, type Item, must } from '../api/client';
import { can, type Me, useMe } from '../session';
import { Card, Choice, Field, PageTitle, Secret, When } from '../ui/bits';
import { useAction, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { DataTable } from '../ui/table';
import { Channels, Webhooks } from './integrations-delivery';

type ApiKey = Item<'/api/v1/auth/api-keys/'>;
const ROLES = ['viewer', 'analyst', 'admin', 'owner'] as const;

function ApiKeys({ me }: { me: Me }) {
  const keys = useLoad(() => must(api.GET('/api/v1/auth/api-keys/', { params: { query: { page_size: 200 } } })), []);
  const [form, setForm] = useState({ name: '', role: me.role as string, expires_at: '' });
  const [shown, setShown] = useState<{ name: string; key: string } | null>(null);
  const { error, busy, run } = useAction();

  async function create(event: FormEvent) {
    event.preventDefault();
    const made = await run(() =>
      must(api.POST('/api/v1/auth/api-keys/', { body: { name: form.name, role: form.role as ApiKey['role'], ...(form.expires_at ? { expires_at: new Date(`${form.expires_at}T00:00:00Z`).toISOString() } : {}) } })),
    );
    if (made) {
      setShown({ name: made.name, key: made.key });
      setForm({ ...form, name: '' });
      keys.reload();
    }
  }
  async function revoke(key: ApiKey) {
    if (!window.confirm(`Revoke the key “${key.name}”? Whatever uses it stops working at once.`)) return;
    if ((await run(() => must(api.DELETE('/api/v1/auth/api-keys/{id}/', { params: { path: { id: key.id } } })))) !== undefined) keys.reload();
  }

  const col = createColumnHelper<ApiKey>();
  const columns = [
    col.accessor('name', { header: 'Name' }),
    col.accessor('prefix', { header: 'Starts with', cell: (c) => <code>{c.getValue()}…</code> }),
    col.accessor('role', { header: 'Role' }),
    col.accessor('last_used_at', { header: 'Last used', cell: (c) => <When at={c.getValue()} /> }),
    col.accessor('expires_at', { header: 'Expires', cell: (c) => (c.getValue() ? <When at={c.getValue()} /> : 'never') }),
    col.display({
      id: 'revoke',
      header: 'Action',
      cell: (c) => (
        <button type="button" className="small danger" onClick={() => void revoke(c.row.original)}>
          Revoke <span className="sr-only">{c.row.original.name}</span>
        </button>
      ),
    }),
  ];

  return (
    <Card title="API keys">
      <p className="muted">For scripts and other tools: a key acts as you, never above your role.</p>
      <LoadState loading={keys.loading && !keys.data} error={keys.error} what="API keys" />
      {keys.data && <DataTable caption="API keys" rows={keys.data.results} columns={columns} empty="No key yet." />}
      {shown && (
        <div className="notice" role="status">
          <p>
            The key “{shown.name}”, shown this once: copy it now.
          </p>
          <Secret value={shown.key} label="key" />
          <button type="button" className="small" onClick={() => setShown(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form onSubmit={create} className="inline-form" aria-label="New API key">
        <Field label="Name" error={fieldError(error, 'name')}>
          <input required maxLength={200} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
        </Field>
        <Choice label="Role" error={fieldError(error, 'role')} value={form.role} onChange={(v) => setForm({ ...form, role: v })} options={ROLES.filter((r) => can(me, r))} />
        <Field label="Expires on" error={fieldError(error, 'expires_at')} hint="Empty: never">
          <input type="date" value={form.expires_at} onChange={(e) => setForm({ ...form, expires_at: e.target.value })} />
        </Field>
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <ErrorNote error={error} action="manage API keys" />
    </Card>
  );
}

function Feeds({ me }: { me: Me }) {
  const origin = window.location.origin;
  const collections = useLoad(() => must(api.GET('/taxii2/{root}/collections/', { params: { path: { root: me.organization.id } } })), [me.organization.id]);
  return (
    <Card title="TAXII 2.1 and Have I Been Pwned">
      <p>Tools that pull intelligence (OpenCTI, MISP, Sentinel, the OASIS client) read your organization here, with an API key as the password of HTTP Basic:</p>
      <dl className="facts">
        <dt>Discovery</dt>
        <dd>
          <Secret value={`${origin}/taxii2/`} label="discovery URL" />
        </dd>
        <dt>API root</dt>
        <dd>
          <Secret value={`${origin}/taxii2/${me.organization.id}/`} label="API root" />
        </dd>
      </dl>
      <LoadState loading={collections.loading && !collections.data} error={collections.error} what="collections" />
      <ul className="plain">
        {(collections.data?.collections ?? []).map((c) => (
          <li key={c.id}>
            <strong>{c.title}</strong>: {c.description} <Secret value={c.id} label={`${c.title} id`} />
          </li>
        ))}
      </ul>
      <p>Tools that speak Have I Been Pwned's API (the hibp package, pyhibp, PowerShell modules) take this base URL, with an API key as their <code>hibp-api-key</code>:</p>
      <Secret value={`${origin}/hibp/api/v3`} label="HIBP base URL" />
      <Secret value={`${origin}/hibp/pwnedpasswords`} label="Pwned Passwords URL" />
    </Card>
  );
}

export function Integrations() {
  const me = useMe();
  return (
    <>
      <PageTitle title="Integrations" />
      <div className="grid">
        <ApiKeys me={me} />
        <Feeds me={me} />
      </div>
      {/* Their tables are wide: a row of their own each. */}
      <div className="stack">
        <Channels me={me} />
        {can(me, 'admin') ? (
          <Webhooks />
        ) : (
          <Card title="Webhooks">
            <p className="muted">Webhooks are managed by administrators.</p>
          </Card>
        )}
      </div>
    </>
  );
}
