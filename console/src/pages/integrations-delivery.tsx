import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useState } from 'react';
import { api, type Item, must } from '../api/client';
import type { paths } from '../api/schema';
import { can, type Me } from '../session';
import { Badge, Card, Choice, Field, Secret, When } from '../ui/bits';
import { SEVERITIES } from '../ui/format';
import { useAction, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { DataTable } from '../ui/table';

type Webhook = Item<'/api/v1/webhooks/'>;
type Channel = Item<'/api/v1/notifications/channels/'>;
type EventName = NonNullable<paths['/api/v1/webhooks/']['post']['requestBody']>['content']['application/json']['events'][number];
const EVENTS: EventName[] = ['alert.created', 'alert.updated', 'incident.created', 'incident.updated', 'ioc.created', 'ioc.updated', 'ioc.deleted', 'tracking_token.exposed', 'monitor.scan_completed'];
const CHANNEL_KINDS = ['email', 'slack', 'teams', 'mattermost', 'discord'] as const;

function EventChoice({ value, onChange }: { value: EventName[]; onChange: (next: EventName[]) => void }) {
  return (
    <fieldset className="choices">
      <legend>Events</legend>
      {EVENTS.map((e) => (
        <label key={e} className="check">
          <input type="checkbox" checked={value.includes(e)} onChange={(x) => onChange(x.target.checked ? [...value, e] : value.filter((v) => v !== e))} /> {e}
        </label>
      ))}
    </fieldset>
  );
}

function Deliveries({ id }: { id: string }) {
  const list = useLoad(() => must(api.GET('/api/v1/webhooks/{id}/deliveries/', { params: { path: { id }, query: { page_size: 10 } } })), [id]);
  if (list.error || list.loading) return <LoadState loading={list.loading} error={list.error} what="deliveries" />;
  return (
    <ul className="plain deliveries">
      {(list.data?.results ?? []).map((d) => (
        <li key={d.id}>
          <When at={d.created_at} /> {d.event_type} (attempt {d.attempt}): {d.status_code ?? 'no answer'}
          {d.error ? `, ${d.error}` : ''} in {d.duration_ms} ms
        </li>
      ))}
      {list.data?.results.length === 0 && <li className="muted">No delivery yet.</li>}
    </ul>
  );
}

export function Webhooks() {
  const hooks = useLoad(() => must(api.GET('/api/v1/webhooks/', { params: { query: { page_size: 100 } } })), []);
  const [form, setForm] = useState<{ url: string; description: string; events: EventName[] }>({ url: '', description: '', events: ['alert.created'] });
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();

  async function create(event: FormEvent) {
    event.preventDefault();
    const made = await run(() => must(api.POST('/api/v1/webhooks/', { body: { url: form.url, events: form.events, description: form.description } })));
    if (made) {
      setSecret(made.secret ?? null);
      setForm({ ...form, url: '', description: '' });
      hooks.reload();
    }
  }
  async function test(hook: Webhook) {
    const result = await run(() => must(api.POST('/api/v1/webhooks/{id}/test/', { params: { path: { id: hook.id } } })));
    if (result) {
      setSaid(result.delivered ? `Ping delivered to ${hook.url}: ${result.status_code} in ${result.duration_ms} ms.` : `Ping not delivered to ${hook.url} (${result.status_code ?? 'no answer'}).`);
      setOpen(hook.id);
    }
  }
  async function remove(hook: Webhook) {
    if (!window.confirm(`Delete the webhook to ${hook.url}?`)) return;
    if ((await run(() => must(api.DELETE('/api/v1/webhooks/{id}/', { params: { path: { id: hook.id } } })))) !== undefined) hooks.reload();
  }

  const col = createColumnHelper<Webhook>();
  const columns = [
    col.accessor('url', { header: 'URL' }),
    col.accessor((w) => w.events.join(', '), { id: 'events', header: 'Events' }),
    col.accessor((w) => (w.is_active ? (w.failure_count ? `${w.failure_count} failures` : 'healthy') : 'disabled'), { id: 'health', header: 'Health' }),
    col.accessor('last_delivery_at', { header: 'Last delivery', cell: (c) => <When at={c.getValue()} /> }),
    col.display({
      id: 'actions',
      header: 'Actions',
      cell: (c) => (
        <span className="row-actions">
          <button type="button" className="small" onClick={() => void test(c.row.original)}>
            Test
          </button>
          <button type="button" className="small" aria-expanded={open === c.row.original.id} onClick={() => setOpen(open === c.row.original.id ? null : c.row.original.id)}>
            Deliveries
          </button>
          <button type="button" className="small danger" onClick={() => void remove(c.row.original)}>
            Delete
          </button>
        </span>
      ),
    }),
  ];

  return (
    <Card title="Webhooks">
      <p className="muted">Events POSTed to your systems, signed as Standard Webhooks sign them.</p>
      <LoadState loading={hooks.loading && !hooks.data} error={hooks.error} what="webhooks" />
      {hooks.data && <DataTable caption="Webhooks" rows={hooks.data.results} columns={columns} empty="No webhook yet." />}
      {open && (
        <section aria-label="Recent deliveries">
          <h3>Recent deliveries</h3>
          <Deliveries id={open} key={said} />
        </section>
      )}
      <p aria-live="polite" className="said">
        {said}
      </p>
      {secret && (
        <div className="notice" role="status">
          <p>The signing secret, shown this once: copy it into your receiver.</p>
          <Secret value={secret} label="secret" />
        </div>
      )}
      <form onSubmit={create} aria-label="New webhook">
        <Field label="URL" error={fieldError(error, 'url')}>
          <input required type="url" value={form.url} onChange={(e) => setForm({ ...form, url: e.target.value })} />
        </Field>
        <EventChoice value={form.events} onChange={(events) => setForm({ ...form, events })} />
        <Field label="Description" error={fieldError(error, 'description')}>
          <input value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
        </Field>
        <button type="submit" disabled={busy || form.events.length === 0}>
          Create webhook
        </button>
      </form>
      <ErrorNote error={error} action="manage webhooks" />
    </Card>
  );
}

export function Channels({ me }: { me: Me }) {
  const channels = useLoad(() => must(api.GET('/api/v1/notifications/channels/', { params: { query: { page_size: 100 } } })), []);
  const [form, setForm] = useState<{ kind: string; name: string; target: string; events: EventName[]; min_severity: string }>({ kind: 'email', name: '', target: '', events: ['alert.created'], min_severity: '' });
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const admin = can(me, 'admin');

  async function create(event: FormEvent) {
    event.preventDefault();
    const made = await run(() =>
      must(api.POST('/api/v1/notifications/channels/', { body: { kind: form.kind as Channel['kind'], name: form.name, target: form.target, events: form.events, min_severity: (form.min_severity || null) as Channel['min_severity'] } })),
    );
    if (made) {
      setForm({ ...form, name: '', target: '' });
      setSaid(`Channel “${made.name}” created.`);
      channels.reload();
    }
  }
  async function test(channel: Channel) {
    const result = await run(() => must(api.POST('/api/v1/notifications/channels/{id}/test/', { params: { path: { id: channel.id } } })));
    if (result) {
      setSaid(result.delivered ? `Sample sent to “${channel.name}” (${result.status_code}).` : `“${channel.name}” refused the sample: ${result.error ?? result.status_code}.`);
      channels.reload();
    }
  }

  const col = createColumnHelper<Channel>();
  const columns = [
    col.accessor('name', { header: 'Name' }),
    col.accessor('kind', { header: 'Kind' }),
    col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} kind="status" /> }),
    col.accessor('last_success_at', { header: 'Last sent', cell: (c) => <When at={c.getValue()} /> }),
    col.accessor('last_error', { header: 'Last error' }),
    ...(admin
      ? [
          col.display({
            id: 'test',
            header: 'Action',
            cell: (c) => (
              <button type="button" className="small" onClick={() => void test(c.row.original)}>
                Test <span className="sr-only">{c.row.original.name}</span>
              </button>
            ),
          }),
        ]
      : []),
  ];

  return (
    <Card title="Notification channels">
      <p className="muted">Where people read alerts: e-mail and chat.</p>
      <LoadState loading={channels.loading && !channels.data} error={channels.error} what="channels" />
      {channels.data && <DataTable caption="Notification channels" rows={channels.data.results} columns={columns} empty="No channel yet." />}
      <p aria-live="polite" className="said">
        {said}
      </p>
      {admin && (
        <form onSubmit={create} aria-label="New channel">
          <Choice label="Kind" error={fieldError(error, 'kind')} value={form.kind} onChange={(v) => setForm({ ...form, kind: v })} options={CHANNEL_KINDS} />
          <Field label="Name" error={fieldError(error, 'name')}>
            <input required maxLength={200} value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
          </Field>
          <Field label={form.kind === 'email' ? 'Addresses' : 'Incoming-webhook URL'} hint={form.kind === 'email' ? 'Comma-separated, up to 20' : 'The URL the chat service gave you (kept secret)'}>
            <input required value={form.target} onChange={(e) => setForm({ ...form, target: e.target.value })} />
          </Field>
          <EventChoice value={form.events} onChange={(events) => setForm({ ...form, events })} />
          <Choice label="Lowest severity" error={fieldError(error, 'min_severity')} value={form.min_severity} onChange={(v) => setForm({ ...form, min_severity: v })} any="every alert" options={SEVERITIES} />
          <button type="submit" disabled={busy || form.events.length === 0}>
            Create channel
          </button>
        </form>
      )}
      <ErrorNote error={error} action="manage channels" />
    </Card>
  );
}
