import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useState } from 'react';
import { api, type Item, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Choice, Field, PageTitle, When } from '../ui/bits';
import { query } from '../ui/format';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

type Feed = Item<'/api/v1/feeds/'>;
type Indicator = Item<'/api/v1/indicators/'>;
const PAGE_SIZE = 50;
export const FEED_KINDS = {
  taxii2: 'TAXII 2.1 server: its discovery URL or an API root',
  stix: 'STIX 2.1 bundle at a URL',
  misp: 'MISP feed: a feed directory (manifest.json), or MISP CSV or freetext',
  csv: 'Indicator list: one value a line, or a CSV column (abuse.ch lists)',
  hibp: 'Have I Been Pwned API: the breached accounts of the domains your monitors watch',
} as const;
const INDICATOR_TYPES = ['ipv4', 'ipv6', 'cidr', 'domain', 'url', 'email', 'md5', 'sha1', 'sha256', 'sha512', 'user-agent', 'stix-pattern'];

const feedCol = createColumnHelper<Feed>();
const icol = createColumnHelper<Indicator>();

/** Feeds and the indicators they bring: admins add and pull feeds, analysts flag false positives. */
export function Feeds() {
  const me = useMe();
  const [filters, setFilters] = useQueryState(['type', 'tlp', 'feed', 'search', 'false_positive'] as const);
  const feeds = useLoad(() => must(api.GET('/api/v1/feeds/', { params: { query: { page_size: 100, ordering: 'name' } } })), []);
  const indicators = useLoad(
    () => must(api.GET('/api/v1/indicators/', { params: { query: { ...query({ type: filters.type, tlp: filters.tlp, feed: filters.feed, search: filters.search, false_positive: filters.false_positive }), ordering: '-last_seen', page: filters.page, page_size: PAGE_SIZE } as never } })),
    [filters],
  );
  const [draft, setDraft, clearDraft] = useDraft('feed-new', { name: '', kind: 'stix', url: '', format: 'misp', column: '', collections: '', header: '', interval: '3600' });
  // The key stays in this page only: drafts are kept in sessionStorage, a secret never is.
  const [secret, setSecret] = useState('');
  const made = useAction();
  const acted = useAction();

  async function sync(feed: Feed) {
    if ((await acted.run(() => must(api.POST('/api/v1/feeds/{id}/sync/', { params: { path: { id: feed.id } } })))) !== undefined) feeds.reload();
  }

  async function flag(indicator: Indicator) {
    const done = await acted.run(() => must(api.PATCH('/api/v1/indicators/{id}/', { params: { path: { id: indicator.id } }, body: { false_positive: !indicator.false_positive } })));
    if (done !== undefined) indicators.reload();
  }

  async function create(event: FormEvent) {
    event.preventDefault();
    const kind = draft.kind as Feed['kind'];
    const column = /^\d+$/.test(draft.column) ? Number(draft.column) : draft.column;
    const body = {
      name: draft.name,
      kind,
      url: draft.url,
      interval_seconds: Number(draft.interval),
      ...(kind === 'misp' && { format: draft.format as 'misp' | 'csv' | 'freetext' }),
      ...((kind === 'csv' || (kind === 'misp' && draft.format === 'csv')) && column !== '' && { column }),
      ...(kind === 'taxii2' && draft.collections.trim() && { collections: draft.collections.split(',').map((c) => c.trim()).filter(Boolean) }),
      ...(draft.header && secret && { auth: { type: 'header' as const, name: draft.header, value: secret } }),
    };
    if ((await made.run(() => must(api.POST('/api/v1/feeds/', { body })))) !== undefined) {
      clearDraft();
      setSecret('');
      feeds.reload();
    }
  }

  const feedColumns = [
    feedCol.accessor('name', { header: 'Feed', cell: (c) => <button type="button" className="link" onClick={() => setFilters({ feed: c.row.original.id, page: 1 })}>{c.getValue()}</button> }),
    feedCol.accessor('kind', { header: 'Kind', cell: (c) => (c.row.original.format && c.row.original.format !== 'misp' ? `misp (${c.row.original.format})` : c.getValue()) }),
    feedCol.accessor('status', { header: 'Health', cell: (c) => <Badge value={c.getValue()} kind="status" /> }),
    feedCol.accessor('last_success_at', { header: 'Last pulled well', cell: (c) => <When at={c.getValue()} /> }),
    feedCol.accessor((f) => (f.kind === 'hibp' ? `${f.records_added} records` : `${f.indicators_added} / ${f.indicators_updated} / ${f.indicators_retired}`), { id: 'counts', header: 'Added / updated / retired' }),
    feedCol.accessor('rejected', { header: 'Rejected' }),
    feedCol.accessor('last_error', { header: 'Last error', cell: (c) => c.getValue() ?? <span className="muted">none</span> }),
    ...(can(me, 'admin')
      ? [
          feedCol.display({
            id: 'pull',
            header: 'Pull',
            cell: (c) => (
              <button type="button" className="small" disabled={acted.busy} onClick={() => void sync(c.row.original)}>
                Pull now<span className="sr-only"> {c.row.original.name}</span>
              </button>
            ),
          }),
        ]
      : []),
  ];
  const indicatorColumns = [
    icol.accessor('type', { header: 'Type' }),
    icol.accessor('value', { header: 'Value', cell: (c) => <code className="value">{c.getValue()}</code> }),
    icol.accessor('tlp', { header: 'TLP', cell: (c) => <Badge value={c.getValue() ? `tlp:${c.getValue()}` : null} /> }),
    icol.accessor('confidence', { header: 'Confidence', cell: (c) => c.getValue() ?? <span className="muted">—</span> }),
    icol.accessor((i) => i.feeds.map((f) => f.name).join(', '), { id: 'feeds', header: 'Feeds' }),
    icol.accessor('last_seen', { header: 'Last seen', cell: (c) => <When at={c.getValue()} /> }),
    icol.accessor((i) => (i.revoked ? 'revoked' : i.false_positive ? 'false positive' : 'live'), { id: 'state', header: 'State', cell: (c) => <Badge value={c.getValue().replace(' ', '_')} kind="status" /> }),
    ...(can(me, 'analyst')
      ? [
          icol.display({
            id: 'flag',
            header: 'False positive',
            cell: (c) => (
              <button type="button" className="small" disabled={acted.busy} onClick={() => void flag(c.row.original)}>
                {c.row.original.false_positive ? 'Unflag' : 'Flag'}<span className="sr-only"> {c.row.original.value}</span>
              </button>
            ),
          }),
        ]
      : []),
  ];
  const feedOptions = (feeds.data?.results ?? []).map((f) => [f.id, f.name] as [string, string]);

  return (
    <>
      <PageTitle title="Feeds and indicators" />
      <p className="muted">Intelligence your organization already has, pulled on a schedule. Its indicators mark tracking-token hits, leak records and incident IOCs that they name.</p>
      <LoadState loading={feeds.loading && !feeds.data} error={feeds.error} what="feeds" />
      {feeds.data && <DataTable caption="Feeds" rows={feeds.data.results} columns={feedColumns} empty="No feed yet." />}
      <ErrorNote error={acted.error} action="do that" />
      <h2>Indicators</h2>
      <form className="filters" aria-label="Filter indicators" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Type" value={filters.type} onChange={(v) => setFilters({ type: v, page: 1 })} any="any" options={INDICATOR_TYPES} />
        <Choice label="TLP" value={filters.tlp} onChange={(v) => setFilters({ tlp: v, page: 1 })} any="any" options={['clear', 'green', 'amber', 'amber+strict', 'red']} />
        <Choice label="Feed" value={filters.feed} onChange={(v) => setFilters({ feed: v, page: 1 })} any="any" options={feedOptions} />
        <Choice label="False positive" value={filters.false_positive} onChange={(v) => setFilters({ false_positive: v, page: 1 })} any="either" options={[['true', 'yes'], ['false', 'no']]} />
        <Field label="Value or name">
          <input type="search" value={filters.search} onChange={(e) => setFilters({ search: e.target.value, page: 1 })} />
        </Field>
      </form>
      <LoadState loading={indicators.loading && !indicators.data} error={indicators.error} what="indicators" />
      {indicators.data && (
        <>
          <DataTable caption="Indicators" rows={indicators.data.results} columns={indicatorColumns} empty="No indicator matches these filters." />
          <Pager count={indicators.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
      {can(me, 'admin') && (
        <form className="panel" onSubmit={create} aria-labelledby="new-feed">
          <h2 id="new-feed">New feed</h2>
          <fieldset>
            <legend>Kind</legend>
            {Object.entries(FEED_KINDS).map(([k, text]) => (
              <label key={k} className="check">
                <input type="radio" name="feed-kind" value={k} checked={draft.kind === k} onChange={() => setDraft({ kind: k })} /> {text}
              </label>
            ))}
          </fieldset>
          <Field label="Name" error={fieldError(made.error, 'name')}>
            <input required maxLength={200} value={draft.name} onChange={(e) => setDraft({ name: e.target.value })} />
          </Field>
          <Field label="URL" error={fieldError(made.error, 'url')} hint="http or https; a public address">
            <input required type="url" value={draft.url} onChange={(e) => setDraft({ url: e.target.value })} />
          </Field>
          {draft.kind === 'misp' && <Choice label="MISP format" value={draft.format} onChange={(v) => setDraft({ format: v })} options={[['misp', 'feed directory (manifest.json)'], ['csv', 'CSV'], ['freetext', 'freetext']]} error={fieldError(made.error, 'format')} />}
          {(draft.kind === 'csv' || (draft.kind === 'misp' && draft.format === 'csv')) && (
            <Field label="Column" error={fieldError(made.error, 'column')} hint="A header name or a number from 1; empty: every line is one value">
              <input value={draft.column} onChange={(e) => setDraft({ column: e.target.value })} />
            </Field>
          )}
          {draft.kind === 'taxii2' && (
            <Field label="Collections" error={fieldError(made.error, 'collections')} hint="Ids or titles, separated by commas; empty: every collection it may read">
              <input value={draft.collections} onChange={(e) => setDraft({ collections: e.target.value })} />
            </Field>
          )}
          <Field label="Key header" hint="The header carrying the feed's API key, if it needs one (for example X-API-Key; hibp-api-key for Have I Been Pwned)" error={fieldError(made.error, 'auth.name')}>
            <input value={draft.header} pattern="[A-Za-z0-9\-]+" onChange={(e) => setDraft({ header: e.target.value })} />
          </Field>
          <Field label="Key" hint="Shown once: reads show it masked" error={fieldError(made.error, 'auth.value')}>
            <input type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} />
          </Field>
          <Choice label="Pull every" value={draft.interval} onChange={(v) => setDraft({ interval: v })} options={[['900', '15 minutes'], ['3600', 'hour'], ['21600', '6 hours'], ['86400', 'day']]} />
          <ErrorNote error={made.error} action="add the feed" />
          <button type="submit" className="primary" disabled={made.busy}>
            Add feed
          </button>
        </form>
      )}
    </>
  );
}
