import { createColumnHelper } from '@tanstack/react-table';
import type { FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Item, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Choice, Field, PageTitle, When } from '../ui/bits';
import { query } from '../ui/format';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

type Token = Item<'/api/v1/tracking-tokens/'>;
export const TOKEN_KINDS = {
  web_bug: 'Web bug: an image URL that records whoever loads it',
  redirect: 'Redirect: a link that records the visitor, then sends them on',
  credential: 'Credential: a fake login that records any use',
  api_key: 'API key: a fake key of this API that records any use',
} as const;
const PAGE_SIZE = 50;

const col = createColumnHelper<Token>();
const columns = [
  col.accessor('name', { header: 'Name', cell: (c) => <Link href={`/tokens/${c.row.original.id}/`}>{c.getValue()}</Link> }),
  col.accessor('kind', { header: 'Kind', cell: (c) => c.getValue().replace('_', ' ') }),
  col.accessor('status', { header: 'Status', cell: (c) => <Badge value={c.getValue()} kind="status" /> }),
  col.accessor('exposure_count', { header: 'Exposures' }),
  col.accessor('last_exposed_at', { header: 'Last exposed', cell: (c) => <When at={c.getValue()} /> }),
];

export function Tokens() {
  const me = useMe();
  const [, navigate] = useLocation();
  const [filters, setFilters] = useQueryState(['kind', 'status', 'search'] as const);
  const list = useLoad(() => must(api.GET('/api/v1/tracking-tokens/', { params: { query: { ...query({ kind: filters.kind, status: filters.status, search: filters.search }), page: filters.page, page_size: PAGE_SIZE } } })), [filters]);
  const [draft, setDraft, clearDraft] = useDraft('token-new', { name: '', kind: 'web_bug', memo: '', redirect_url: '' });
  const { error, busy, run } = useAction();

  async function create(event: FormEvent) {
    event.preventDefault();
    const kind = draft.kind as Token['kind'];
    const made = await run(() => must(api.POST('/api/v1/tracking-tokens/', { body: { name: draft.name, kind, memo: draft.memo, ...(kind === 'redirect' ? { redirect_url: draft.redirect_url } : {}) } })));
    if (made) {
      clearDraft();
      navigate(`/tokens/${made.id}/`);
    }
  }

  return (
    <>
      <PageTitle title="Tracking tokens" />
      <form className="filters" aria-label="Filter tracking tokens" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Kind" value={filters.kind} onChange={(v) => setFilters({ kind: v })} any="any" options={Object.keys(TOKEN_KINDS)} />
        <Choice label="Status" value={filters.status} onChange={(v) => setFilters({ status: v })} any="any" options={['active', 'disabled']} />
        <Field label="Name or memo">
          <input type="search" value={filters.search} onChange={(e) => setFilters({ search: e.target.value })} />
        </Field>
      </form>
      <LoadState loading={list.loading && !list.data} error={list.error} what="tracking tokens" />
      {list.data && (
        <>
          <DataTable caption="Tracking tokens" rows={list.data.results} columns={columns} empty="No token yet: create one below." />
          <Pager count={list.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
      {can(me, 'analyst') && (
        <form className="panel" onSubmit={create} aria-labelledby="new-token">
          <h2 id="new-token">New tracking token</h2>
          <fieldset>
            <legend>Kind</legend>
            {Object.entries(TOKEN_KINDS).map(([k, text]) => (
              <label key={k} className="check">
                <input type="radio" name="kind" value={k} checked={draft.kind === k} onChange={() => setDraft({ kind: k })} /> {text}
              </label>
            ))}
          </fieldset>
          <Field label="Name" error={fieldError(error, 'name')}>
            <input required maxLength={200} value={draft.name} onChange={(e) => setDraft({ name: e.target.value })} />
          </Field>
          {draft.kind === 'redirect' && (
            <Field label="Send visitors to" error={fieldError(error, 'redirect_url')} hint="An http or https URL">
              <input required type="url" value={draft.redirect_url} onChange={(e) => setDraft({ redirect_url: e.target.value })} />
            </Field>
          )}
          <Field label="Memo" error={fieldError(error, 'memo')} hint="Where it is planted, what it means if it fires">
            <textarea rows={2} value={draft.memo} onChange={(e) => setDraft({ memo: e.target.value })} />
          </Field>
          <ErrorNote error={error} action="create a tracking token" />
          <button type="submit" className="primary" disabled={busy}>
            Create token
          </button>
        </form>
      )}
    </>
  );
}
