import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useState } from 'react';
import { api, type Item, must, type Ok } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Card, download, Choice, Field, PageTitle, toCsv, When } from '../ui/bits';
import { Chart } from '../ui/chart';
import { query, SEVERITIES, SEVERITY_COLOURS } from '../ui/format';
import { useAction, useLoad } from '../ui/load';
import { ErrorNote, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

type LeakRecord = Item<'/api/v1/leaks/search/'>;
type SearchPage = Ok<'/api/v1/leaks/search/', 'get'>;
const CRITERIA = ['q', 'email', 'username', 'phone', 'ip', 'domain', 'exact_domain', 'severity', 'source', 'has_password', 'leaked_after', 'leaked_before', 'ordering', 'saved'] as const;
type Criterion = Exclude<(typeof CRITERIA)[number], 'saved'>;
const PAGE_SIZE = 50;

const col = createColumnHelper<LeakRecord>();
const columns = [
  col.accessor('severity', { header: 'Severity', cell: (c) => <Badge value={c.getValue()} kind="severity" /> }),
  col.accessor('email', { header: 'E-mail' }),
  col.accessor('username', { header: 'Username' }),
  col.accessor('domain', { header: 'Domain' }),
  col.accessor('ip', { header: 'IP' }),
  col.accessor('phone', { header: 'Phone' }),
  col.accessor('password_masked', { header: 'Password', cell: (c) => c.getValue() ?? (c.row.original.has_password ? '(hash)' : '') }),
  col.accessor((r) => r.source.name, { id: 'source', header: 'Source' }),
  col.accessor('leaked_at', { header: 'Leaked', cell: (c) => (c.getValue() ? <When at={c.getValue()} /> : '—') }),
];

/** The search's query from the form's values: what the API takes, empty fields left out. */
function searchQuery(all: Record<Criterion, string>) {
  const c = Object.fromEntries(CRITERIA.filter((k) => k !== 'saved').map((k) => [k, all[k as Criterion]])) as Record<Criterion, string>;
  return query({
    ...c,
    exact_domain: c.exact_domain === 'true' ? true : undefined,
    has_password: c.has_password === '' ? undefined : c.has_password === 'true',
    ordering: (c.ordering || undefined) as '-leaked_at' | undefined,
  });
}

export function LeakSearch() {
  const me = useMe();
  const [criteria, setCriteria] = useQueryState(CRITERIA);
  const [form, setForm] = useState<Record<Criterion, string>>(() => Object.fromEntries(CRITERIA.map((k) => [k, criteria[k]])) as Record<Criterion, string>);
  const [saveName, setSaveName] = useState('');
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const sources = useLoad(() => must(api.GET('/api/v1/leaks/sources/', { params: { query: { page_size: 500 } } })), []);
  const saved = useLoad(() => must(api.GET('/api/v1/leaks/saved-searches/', { params: { query: { page_size: 100 } } })), []);
  const stats = useLoad(() => must(api.GET('/api/v1/leaks/stats/')), []);
  const asked = CRITERIA.some((k) => k !== 'ordering' && criteria[k]);
  const results = useLoad<SearchPage | null>(async () => {
    if (criteria.saved) return must(api.GET('/api/v1/leaks/saved-searches/{id}/results/', { params: { path: { id: criteria.saved }, query: { page: criteria.page, page_size: PAGE_SIZE } } }));
    if (!asked) return null;
    return must(api.GET('/api/v1/leaks/search/', { params: { query: { ...searchQuery(criteria), page: criteria.page, page_size: PAGE_SIZE } } }));
  }, [criteria]);

  function submit(event: FormEvent) {
    event.preventDefault();
    setCriteria({ ...form, saved: '' });
  }
  async function save() {
    const done = await run(() => must(api.POST('/api/v1/leaks/saved-searches/', { body: { name: saveName, query: searchQuery(criteria) } })));
    if (done) {
      setSaid(`Saved as “${done.name}”.`);
      setSaveName('');
      saved.reload();
    }
  }
  function exportPage() {
    const rows = results.data?.results ?? [];
    const header = ['id', 'source', 'email', 'username', 'domain', 'ip', 'phone', 'full_name', 'password_masked', 'severity', 'leaked_at'];
    download(`leaks-page-${criteria.page}.csv`, toCsv(header, rows.map((r) => [r.id, r.source.name, r.email, r.username, r.domain, r.ip, r.phone, r.full_name, r.password_masked, r.severity, r.leaked_at])), 'text/csv');
  }
  const text = (key: Criterion, label: string, hint?: string, type = 'text') => (
    <Field label={label} hint={hint}>
      <input type={type} value={form[key]} onChange={(e) => setForm({ ...form, [key]: e.target.value })} />
    </Field>
  );

  return (
    <>
      <PageTitle title="Leak search" />
      <form className="filters search" onSubmit={submit} aria-label="Search criteria">
        {text('q', 'Full text', 'words, "a phrase", prefix*')}
        {text('email', 'E-mail')}
        {text('username', 'Username')}
        {text('phone', 'Phone')}
        {text('ip', 'IP address or CIDR')}
        {text('domain', 'Domain')}
        <label className="check">
          <input type="checkbox" checked={form.exact_domain === 'true'} onChange={(e) => setForm({ ...form, exact_domain: e.target.checked ? 'true' : '' })} /> this domain only, no subdomains
        </label>
        <Choice label="Severity" value={form.severity} onChange={(v) => setForm({ ...form, severity: v })} any="any" options={[['critical,high', 'critical or high'], ...SEVERITIES]} />
        <Choice label="Source" value={form.source} onChange={(v) => setForm({ ...form, source: v })} any="any" options={(sources.data?.results ?? []).map((s) => [s.id, s.name] as const)} />
        <Choice label="Password" value={form.has_password} onChange={(v) => setForm({ ...form, has_password: v })} any="either" options={[['true', 'with a password'], ['false', 'without']]} />
        {text('leaked_after', 'Leaked after', undefined, 'date')}
        {text('leaked_before', 'Leaked before', undefined, 'date')}
        <Choice label="Order" value={form.ordering} onChange={(v) => setForm({ ...form, ordering: v })} any="newest added" options={[['-leaked_at', 'newest leaked'], ['leaked_at', 'oldest leaked']]} />
        <button type="submit" className="primary">
          Search
        </button>
      </form>

      <LoadState loading={results.loading && !results.data} error={results.error} what="records" />
      {results.data && (
        <section aria-label="Results">
          <div className="toolbar">
            <span>
              {results.data.count_estimated ? 'About ' : ''}
              {results.data.count.toLocaleString()} records{results.data.count_estimated ? ' (an estimate)' : ''}
            </span>
            <button type="button" onClick={exportPage} disabled={!results.data.results.length}>
              Export this page as CSV
            </button>
            {can(me, 'analyst') && !criteria.saved && (
              <>
                <label className="inline">
                  <span className="sr-only">Name of the saved search</span>
                  <input placeholder="Name to save as" value={saveName} onChange={(e) => setSaveName(e.target.value)} />
                </label>
                <button type="button" disabled={!saveName || busy} onClick={() => void save()}>
                  Save this search
                </button>
              </>
            )}
          </div>
          <p aria-live="polite" className="said">
            {said}
          </p>
          <ErrorNote error={error} action="save this search" />
          <DataTable caption="Leak records" rows={results.data.results} columns={columns} empty="No record matches." />
          <Pager count={results.data.count} page={criteria.page} pageSize={PAGE_SIZE} estimated={results.data.count_estimated} onPage={(page) => setCriteria({ page })} />
        </section>
      )}

      <div className="grid">
        <Card title="Saved searches">
          <LoadState loading={saved.loading && !saved.data} error={saved.error} what="saved searches" />
          <ul className="plain">
            {(saved.data?.results ?? []).map((s) => (
              <li key={s.id}>
                <button type="button" className="link" onClick={() => setCriteria({ saved: s.id })}>
                  Run “{s.name}”
                </button>{' '}
                <span className="muted">
                  last run <When at={s.last_run_at} />
                  {s.last_result_count !== null && `, ${s.last_result_count.toLocaleString()} records`}
                </span>
              </li>
            ))}
          </ul>
          {saved.data && saved.data.results.length === 0 && <p className="muted">None saved yet.</p>}
        </Card>
        <Card title="The corpus">
          <LoadState loading={stats.loading} error={stats.error} what="statistics" />
          {stats.data && (
            <>
              <p>
                {stats.data.total_records.toLocaleString()} records in {stats.data.total_sources.toLocaleString()} sources, {stats.data.records_with_password.toLocaleString()} with a password.
              </p>
              <Chart title="Records by month leaked" labels={stats.data.by_month.map((m) => m.month)} series={[{ label: 'records', values: stats.data.by_month.map((m) => m.records), colour: SEVERITY_COLOURS.low! }]} />
              <Chart
                title="Records by data class"
                labels={Object.keys(stats.data.by_data_class)}
                series={[{ label: 'records', values: Object.values(stats.data.by_data_class), colour: SEVERITY_COLOURS.medium! }]}
                bars
              />
            </>
          )}
        </Card>
      </div>
    </>
  );
}
