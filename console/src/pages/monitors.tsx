import { createColumnHelper } from '@tanstack/react-table';
import type { FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Item, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Choice, Field, PageTitle, When } from '../ui/bits';
import { query, SEVERITIES } from '../ui/format';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

type Monitor = Item<'/api/v1/monitoring/'>;
export const MONITOR_TYPES = ['domain', 'email', 'username', 'keyword', 'ip'] as const;
export const TERM_HINTS: Record<string, string> = {
  domain: 'One domain per line, e.g. example.com: it and its subdomains',
  email: 'One address per line',
  username: 'One username per line (case ignored)',
  keyword: 'One word or phrase per line, 3 characters at least',
  ip: 'One address or CIDR range per line',
};
const PAGE_SIZE = 50;
export const termsOf = (text: string) => text.split('\n').map((t) => t.trim()).filter(Boolean);

export function Monitors() {
  const me = useMe();
  const [, navigate] = useLocation();
  const [filters, setFilters] = useQueryState(['type', 'status', 'search'] as const);
  const list = useLoad(() => must(api.GET('/api/v1/monitoring/', { params: { query: { ...query({ type: filters.type, status: filters.status, search: filters.search }), page: filters.page, page_size: PAGE_SIZE } } })), [filters]);
  const [draft, setDraft, clearDraft] = useDraft('monitor-new', { name: '', type: 'domain', terms: '', severity: '', description: '', backfill: true });
  const { error, busy, run } = useAction();
  const toggle = useAction();
  const writer = can(me, 'analyst');

  async function create(event: FormEvent) {
    event.preventDefault();
    const made = await run(() =>
      must(
        api.POST('/api/v1/monitoring/', {
          body: { name: draft.name, type: draft.type as Monitor['type'], terms: termsOf(draft.terms), severity: (draft.severity || null) as Monitor['severity'], description: draft.description, backfill: draft.backfill },
        }),
      ),
    );
    if (made) {
      clearDraft();
      navigate(`/monitors/${made.id}/`);
    }
  }
  async function setStatus(m: Monitor, status: 'active' | 'paused') {
    if (await toggle.run(() => must(api.PATCH('/api/v1/monitoring/{id}/', { params: { path: { id: m.id } }, body: { status } })))) list.reload();
  }

  const col = createColumnHelper<Monitor>();
  const columns = [
    col.accessor('name', { header: 'Name', cell: (c) => <Link href={`/monitors/${c.row.original.id}/`}>{c.getValue()}</Link> }),
    col.accessor('type', { header: 'Type' }),
    col.accessor((m) => m.terms.slice(0, 3).join(', ') + (m.terms.length > 3 ? ` and ${m.terms.length - 3} more` : ''), { id: 'terms', header: 'Terms' }),
    col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} kind="status" /> }),
    col.accessor('alerts_open', { header: 'Open alerts', cell: (c) => <Link href={`/alerts/?monitor=${c.row.original.id}&status=new,acknowledged`}>{c.getValue()}</Link> }),
    col.accessor('last_match_at', { header: 'Last match', cell: (c) => <When at={c.getValue()} /> }),
    ...(writer
      ? [
          col.display({
            id: 'pause',
            header: 'Action',
            cell: (c) =>
              c.row.original.status === 'active' ? (
                <button type="button" className="small" onClick={() => void setStatus(c.row.original, 'paused')}>
                  Pause <span className="sr-only">{c.row.original.name}</span>
                </button>
              ) : (
                <button type="button" className="small" onClick={() => void setStatus(c.row.original, 'active')}>
                  Resume <span className="sr-only">{c.row.original.name}</span>
                </button>
              ),
          }),
        ]
      : []),
  ];

  return (
    <>
      <PageTitle title="Monitors" />
      <form className="filters" aria-label="Filter monitors" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Type" value={filters.type} onChange={(v) => setFilters({ type: v })} any="any" options={MONITOR_TYPES} />
        <Choice label="Status" value={filters.status} onChange={(v) => setFilters({ status: v })} any="any" options={['active', 'paused']} />
        <Field label="Name or term">
          <input type="search" value={filters.search} onChange={(e) => setFilters({ search: e.target.value })} />
        </Field>
      </form>
      <ErrorNote error={toggle.error} action="change the monitor" />
      <LoadState loading={list.loading && !list.data} error={list.error} what="monitors" />
      {list.data && (
        <>
          <DataTable caption="Monitors" rows={list.data.results} columns={columns} empty="No monitor yet: create one below." />
          <Pager count={list.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
      {writer && (
        <form className="panel" onSubmit={create} aria-labelledby="new-monitor">
          <h2 id="new-monitor">New monitor</h2>
          <Field label="Name" error={fieldError(error, 'name')}>
            <input required maxLength={200} value={draft.name} onChange={(e) => setDraft({ name: e.target.value })} />
          </Field>
          <Choice label="Type" error={fieldError(error, 'type')} value={draft.type} onChange={(v) => setDraft({ type: v })} options={MONITOR_TYPES} />
          <Field label="Terms" error={fieldError(error, 'terms')} hint={TERM_HINTS[draft.type]}>
            <textarea required rows={4} value={draft.terms} onChange={(e) => setDraft({ terms: e.target.value })} />
          </Field>
          <Choice label="Severity of its alerts" error={fieldError(error, 'severity')} value={draft.severity} onChange={(v) => setDraft({ severity: v })} any="from what each finds" options={SEVERITIES} />
          <Field label="Description" error={fieldError(error, 'description')}>
            <textarea rows={2} value={draft.description} onChange={(e) => setDraft({ description: e.target.value })} />
          </Field>
          <label className="check">
            <input type="checkbox" checked={draft.backfill} onChange={(e) => setDraft({ backfill: e.target.checked })} /> Search the records already held (backfill)
          </label>
          <ErrorNote error={error} action="create a monitor" />
          <button type="submit" className="primary" disabled={busy}>
            Create monitor
          </button>
        </form>
      )}
    </>
  );
}
