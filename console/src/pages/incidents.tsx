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

export type Incident = Item<'/api/v1/incidents/'>;
export const INCIDENT_STATUSES = ['open', 'investigating', 'contained', 'resolved', 'closed'] as const;
export const TLPS = ['clear', 'green', 'amber', 'amber+strict', 'red'] as const;
const PAGE_SIZE = 50;

const col = createColumnHelper<Incident>();
const columns = [
  col.accessor('title', { header: 'Title', cell: (c) => <Link href={`/incidents/${c.row.original.id}/`}>{c.getValue()}</Link> }),
  col.accessor('severity', { header: 'Severity', cell: (c) => <Badge value={c.getValue()} kind="severity" /> }),
  col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} kind="status" /> }),
  col.accessor('tlp', { header: 'TLP', cell: (c) => <Badge value={`tlp ${c.getValue()}`} /> }),
  col.accessor('ioc_count', { header: 'IOCs' }),
  col.accessor('updated_at', { header: 'Changed', cell: (c) => <When at={c.getValue()} /> }),
];

export function Incidents() {
  const me = useMe();
  const [, navigate] = useLocation();
  const [filters, setFilters] = useQueryState(['status', 'severity', 'tlp', 'assignee', 'search', 'ordering'] as const);
  const list = useLoad(
    () =>
      must(
        api.GET('/api/v1/incidents/', {
          params: { query: { ...query({ status: filters.status, severity: filters.severity, tlp: filters.tlp, assignee: filters.assignee, search: filters.search }), ordering: (filters.ordering || undefined) as '-created_at' | undefined, page: filters.page, page_size: PAGE_SIZE } },
        }),
      ),
    [filters],
  );
  const [draft, setDraft, clearDraft] = useDraft('incident-new', { title: '', severity: 'medium', tlp: 'amber', description: '', tags: '' });
  const { error, busy, run } = useAction();

  async function create(event: FormEvent) {
    event.preventDefault();
    const tags = draft.tags.split(',').map((t) => t.trim()).filter(Boolean);
    const made = await run(() => must(api.POST('/api/v1/incidents/', { body: { title: draft.title, description: draft.description, severity: draft.severity as Incident['severity'], tlp: draft.tlp as Incident['tlp'], tags } })));
    if (made) {
      clearDraft();
      navigate(`/incidents/${made.id}/`);
    }
  }

  return (
    <>
      <PageTitle title="Incidents" />
      <form className="filters" aria-label="Filter incidents" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Status" value={filters.status} onChange={(v) => setFilters({ status: v })} any="any" options={[['open,investigating,contained', 'not resolved'], ...INCIDENT_STATUSES]} />
        <Choice label="Severity" value={filters.severity} onChange={(v) => setFilters({ severity: v })} any="any" options={SEVERITIES} />
        <Choice label="TLP" value={filters.tlp} onChange={(v) => setFilters({ tlp: v })} any="any" options={TLPS} />
        <Choice label="Assignee" value={filters.assignee} onChange={(v) => setFilters({ assignee: v })} any="anyone" options={[['me', 'me'], ['none', 'nobody']]} />
        <Field label="Title or description">
          <input type="search" value={filters.search} onChange={(e) => setFilters({ search: e.target.value })} />
        </Field>
        <Choice label="Order" value={filters.ordering} onChange={(v) => setFilters({ ordering: v })} any="newest first" options={[['-updated_at', 'recently changed'], ['-severity', 'most severe']]} />
      </form>
      <LoadState loading={list.loading && !list.data} error={list.error} what="incidents" />
      {list.data && (
        <>
          <DataTable caption="Incidents" rows={list.data.results} columns={columns} empty="No incident matches." />
          <Pager count={list.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
      {can(me, 'analyst') && (
        <form className="panel" onSubmit={create} aria-labelledby="new-incident">
          <h2 id="new-incident">New incident</h2>
          <Field label="Title" error={fieldError(error, 'title')}>
            <input required maxLength={200} value={draft.title} onChange={(e) => setDraft({ title: e.target.value })} />
          </Field>
          <Choice label="Severity" error={fieldError(error, 'severity')} value={draft.severity} onChange={(v) => setDraft({ severity: v })} options={SEVERITIES} />
          <Choice label="TLP" error={fieldError(error, 'tlp')} value={draft.tlp} onChange={(v) => setDraft({ tlp: v })} options={TLPS} />
          <Field label="Tags" error={fieldError(error, 'tags')} hint="Comma-separated">
            <input value={draft.tags} onChange={(e) => setDraft({ tags: e.target.value })} />
          </Field>
          <Field label="Description" error={fieldError(error, 'description')}>
            <textarea rows={3} value={draft.description} onChange={(e) => setDraft({ description: e.target.value })} />
          </Field>
          <ErrorNote error={error} action="create an incident" />
          <button type="submit" className="primary" disabled={busy}>
            Create incident
          </button>
        </form>
      )}
    </>
  );
}
