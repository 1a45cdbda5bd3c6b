import { createColumnHelper } from '@tanstack/react-table';
import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Item, must, type Ok } from '../api/client';
import { can, useMe } from '../session';
import { Badge, PageTitle, Secret, When } from '../ui/bits';
import { useAction, useLoad } from '../ui/load';
import { ErrorNote, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';

type Token = Ok<'/api/v1/tracking-tokens/{id}/', 'get'>;
type Exposure = Item<'/api/v1/tracking-tokens/{id}/timeline/'>;
const PAGE_SIZE = 50;

const col = createColumnHelper<Exposure>();
const columns = [
  col.accessor('occurred_at', { header: 'When', cell: (c) => <When at={c.getValue()} /> }),
  col.accessor('channel', { header: 'How' }),
  col.accessor('source_ip', { header: 'From' }),
  col.accessor('user_agent', { header: 'User agent' }),
  col.accessor((e) => e.leak_source?.name ?? e.referer ?? '', { id: 'where', header: 'Where' }),
  col.accessor('severity', { header: 'Severity', cell: (c) => <Badge value={c.getValue()} kind="severity" /> }),
  col.accessor((e) => e.indicator_matches.map((m) => `${m.field}: ${m.type} ${m.value} (${m.feeds.map((f) => f.name).join(', ')}${m.confidence === null ? '' : `, confidence ${m.confidence}`})`).join('; '), {
    id: 'indicators',
    header: 'Named by indicators',
    cell: (c) => c.getValue() || <span className="muted">none</span>,
  }),
];

/** How to plant a token, kind by kind, with the exact text to copy. */
function Plant({ token }: { token: Token }) {
  if (token.kind === 'web_bug' && token.trigger_url) {
    return (
      <>
        <p>Put this image where only an intruder would open it: a document, an e-mail, an internal page. Every load is recorded.</p>
        <Secret value={token.trigger_url} label="URL" />
        <p>As HTML:</p>
        <Secret value={`<img src="${token.trigger_url}" width="1" height="1" alt="">`} label="HTML" />
      </>
    );
  }
  if (token.kind === 'redirect' && token.trigger_url) {
    return (
      <>
        <p>Put this link where an intruder would follow it (a bookmark, a wiki page, a document). The visit is recorded, then the visitor goes on to {token.redirect_url}.</p>
        <Secret value={token.trigger_url} label="link" />
      </>
    );
  }
  if (token.kind === 'credential' && token.username && token.password) {
    return (
      <>
        <p>Leave this login where an intruder would find it (a configuration file, a password manager, a script). Any sign-in with it, and its appearance in leaked data, is recorded.</p>
        <Secret value={token.username} label="username" />
        <Secret value={token.password} label="password" />
      </>
    );
  }
  if (token.kind === 'api_key' && token.api_key) {
    return (
      <>
        <p>Leave this key where an intruder would find it (a .env file, CI settings, a repository). Any use of it against threatmon, and its appearance in leaked data, is recorded.</p>
        <Secret value={token.api_key} label="key" />
        <Secret value={`THREATMON_API_KEY=${token.api_key}`} label=".env line" />
      </>
    );
  }
  return null;
}

export function TokenDetail({ id }: { id: string }) {
  const me = useMe();
  const [, navigate] = useLocation();
  const [filters, setFilters] = useQueryState([] as const);
  const token = useLoad(() => must(api.GET('/api/v1/tracking-tokens/{id}/', { params: { path: { id } } })), [id]);
  const timeline = useLoad(() => must(api.GET('/api/v1/tracking-tokens/{id}/timeline/', { params: { path: { id }, query: { page: filters.page, page_size: PAGE_SIZE } } })), [id, filters]);
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const t = token.data;

  async function setStatus(status: 'active' | 'disabled') {
    if (await run(() => must(api.PATCH('/api/v1/tracking-tokens/{id}/', { params: { path: { id } }, body: { status } })))) {
      setSaid(status === 'active' ? 'Enabled.' : 'Disabled: it records nothing now.');
      token.reload();
    }
  }
  async function remove() {
    if (!window.confirm('Delete this token? Its URL will record nothing any more.')) return;
    if ((await run(() => must(api.DELETE('/api/v1/tracking-tokens/{id}/', { params: { path: { id } } })))) !== undefined) navigate('/tokens/');
  }

  return (
    <>
      <PageTitle title={t ? `Token: ${t.name}` : 'Tracking token'}>
        <Link href="/tokens/">All tokens</Link>
      </PageTitle>
      <LoadState loading={token.loading && !t} error={token.error} what="the token" />
      {t && (
        // The timeline below the planting, at the page's full width: a hit's row carries its indicators.
        <div className="stack">
          <section aria-label="How to plant it">
            <h2>How to plant it</h2>
            <Plant token={t} />
            {t.memo && <p className="prose">Memo: {t.memo}</p>}
            <p>
              <Badge value={t.status} kind="status" /> {t.exposure_count} exposures, last <When at={t.last_exposed_at} />
            </p>
            {can(me, 'analyst') && (
              <div className="toolbar">
                <button type="button" disabled={busy} onClick={() => void setStatus(t.status === 'active' ? 'disabled' : 'active')}>
                  {t.status === 'active' ? 'Disable' : 'Enable'}
                </button>
                {can(me, 'admin') && (
                  <button type="button" className="danger" disabled={busy} onClick={() => void remove()}>
                    Delete
                  </button>
                )}
              </div>
            )}
            <p aria-live="polite" className="said">
              {said}
            </p>
            <ErrorNote error={error} action="change this token" />
          </section>
          <section aria-label="Exposures">
            <h2>Exposure timeline</h2>
            <LoadState loading={timeline.loading && !timeline.data} error={timeline.error} what="exposures" />
            {timeline.data && (
              <>
                <DataTable caption="Exposures" rows={timeline.data.results} columns={columns} empty="Not triggered yet." />
                <Pager count={timeline.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
              </>
            )}
          </section>
        </div>
      )}
    </>
  );
}
