import { createColumnHelper, type RowSelectionState } from '@tanstack/react-table';
import { type KeyboardEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Item, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Choice, Field, PageTitle, When } from '../ui/bits';
import { plural, query, SEVERITIES } from '../ui/format';
import { useAction, useLoad } from '../ui/load';
import { ErrorNote, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

export type Alert = Item<'/api/v1/monitoring/alerts/'>;
type Triage = 'acknowledged' | 'resolved' | 'false_positive';
const STATUSES = ['new', 'acknowledged', 'resolved', 'false_positive'] as const;
const PAGE_SIZE = 50;
const KEYS: Record<string, Triage> = { a: 'acknowledged', r: 'resolved', f: 'false_positive' };
const VERB: Record<Triage, string> = { acknowledged: 'acknowledged', resolved: 'resolved', false_positive: 'marked false positive' };

/** What an alert found, in one line: the record's identifying fields, as text. */
export function recordLine(alert: Alert): string {
  const r = alert.leak_record;
  return [r.email, r.username, r.domain, r.ip, r.phone].filter(Boolean).join(' · ') || '(no identifier)';
}

const col = createColumnHelper<Alert>();
const columns = [
  col.accessor('severity', { header: 'Severity', cell: (c) => <Badge value={c.getValue()} kind="severity" /> }),
  col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} kind="status" /> }),
  col.display({ id: 'found', header: 'Found', cell: (c) => <Link href={`/alerts/${c.row.original.id}/`}>{recordLine(c.row.original)}</Link> }),
  col.accessor((a) => a.monitor.name, { id: 'monitor', header: 'Monitor' }),
  col.accessor((a) => `${a.matched_term} (${a.matched_field})`, { id: 'term', header: 'Matched' }),
  col.accessor((a) => a.leak_record.source.name, { id: 'source', header: 'Source' }),
  col.accessor('created_at', { header: 'Raised', cell: (c) => <When at={c.getValue()} /> }),
];

export function Alerts() {
  const me = useMe();
  const [, navigate] = useLocation();
  const [filters, setFilters] = useQueryState(['status', 'severity', 'monitor', 'created_after', 'created_before', 'ordering'] as const);
  const [selected, setSelected] = useState<RowSelectionState>({});
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const monitors = useLoad(() => must(api.GET('/api/v1/monitoring/', { params: { query: { page_size: 500, ordering: 'name' } } })), []);
  const list = useLoad(
    () =>
      must(
        api.GET('/api/v1/monitoring/alerts/', {
          params: {
            query: {
              ...query({ status: filters.status, severity: filters.severity, monitor: filters.monitor, created_after: filters.created_after, created_before: filters.created_before }),
              ordering: (filters.ordering || '-created_at') as '-created_at',
              page: filters.page,
              page_size: PAGE_SIZE,
            },
          },
        }),
      ),
    [filters],
  );
  const writer = can(me, 'analyst');
  const ids = Object.keys(selected).filter((id) => selected[id]);

  async function triage(status: Triage, which: string[]) {
    if (!which.length) return;
    const done = await run(() => must(api.POST('/api/v1/monitoring/alerts/bulk/', { body: { ids: which, status } })));
    if (done) {
      setSaid(`${plural(done.updated, 'alert')} ${VERB[status]}.`);
      setSelected({});
      list.reload();
    }
  }

  function onRowKey(alert: Alert, event: KeyboardEvent<HTMLTableRowElement>) {
    if (event.key === 'Enter') return navigate(`/alerts/${alert.id}/`);
    const status = KEYS[event.key];
    if (status && writer) {
      event.preventDefault();
      void triage(status, ids.length ? ids : [alert.id]);
    }
  }

  return (
    <>
      <PageTitle title="Alerts" />
      <form className="filters" aria-label="Filter alerts" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Status" value={filters.status} onChange={(v) => setFilters({ status: v })} any="any" options={[['new,acknowledged', 'open (new or acknowledged)'], ...STATUSES]} />
        <Choice label="Severity" value={filters.severity} onChange={(v) => setFilters({ severity: v })} any="any" options={[['critical,high', 'critical or high'], ...SEVERITIES]} />
        <Choice label="Monitor" value={filters.monitor} onChange={(v) => setFilters({ monitor: v })} any="any" options={(monitors.data?.results ?? []).map((m) => [m.id, m.name] as const)} />
        <Field label="Raised after">
          <input type="date" value={filters.created_after} onChange={(e) => setFilters({ created_after: e.target.value })} />
        </Field>
        <Field label="Raised before">
          <input type="date" value={filters.created_before} onChange={(e) => setFilters({ created_before: e.target.value })} />
        </Field>
        <Choice label="Order" value={filters.ordering} onChange={(v) => setFilters({ ordering: v })} any="newest first" options={[['created_at', 'oldest first'], ['-updated_at', 'recently changed']]} />
      </form>
      {writer && (
        <div className="toolbar" role="toolbar" aria-label="Triage the selected alerts">
          <span>{ids.length ? `${plural(ids.length, 'alert')} selected` : 'Select alerts to triage them'}</span>
          <button type="button" disabled={!ids.length || busy} onClick={() => void triage('acknowledged', ids)}>
            Acknowledge
          </button>
          <button type="button" disabled={!ids.length || busy} onClick={() => void triage('resolved', ids)}>
            Resolve
          </button>
          <button type="button" disabled={!ids.length || busy} onClick={() => void triage('false_positive', ids)}>
            False positive
          </button>
        </div>
      )}
      <p className="muted keys">
        Keys on a row: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>x</kbd> select, <kbd>Enter</kbd> open
        {writer && (
          <>
            , <kbd>a</kbd> acknowledge, <kbd>r</kbd> resolve, <kbd>f</kbd> false positive (the selected rows, or this one)
          </>
        )}
        .
      </p>
      <p aria-live="polite" className="said">
        {said}
      </p>
      <ErrorNote error={error} action="triage alerts" />
      <LoadState loading={list.loading && !list.data} error={list.error} what="alerts" />
      {list.data && (
        <>
          <DataTable caption="Alerts" rows={list.data.results} columns={columns} selection={writer ? { value: selected, onChange: setSelected } : undefined} onRowKey={onRowKey} empty="No alert matches these filters." />
          <Pager count={list.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
    </>
  );
}
