import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useState } from 'react';
import { api, type Item, must } from '../api/client';
import { useMe } from '../session';
import { download, Choice, Field, PageTitle, toCsv, When } from '../ui/bits';
import { plural, query } from '../ui/format';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { useQueryState } from '../ui/query-state';
import { DataTable, Pager } from '../ui/table';
import { type IngestResult, partsOf, sendPart } from '../ui/upload';

type Source = Item<'/api/v1/leaks/sources/'>;
const KINDS = ['breach', 'combolist', 'stealer_log', 'paste', 'other'] as const;
const PAGE_SIZE = 50;

const col = createColumnHelper<Source>();
const columns = [
  col.accessor('name', { header: 'Name' }),
  col.accessor('kind', { header: 'Kind', cell: (c) => c.getValue().replace('_', ' ') }),
  col.accessor('domain', { header: 'Site' }),
  col.accessor('record_count', { header: 'Records', cell: (c) => c.getValue().toLocaleString() }),
  col.accessor('breach_date', { header: 'Breached' }),
  col.accessor('is_verified', { header: 'Verified', cell: (c) => (c.getValue() ? 'yes' : 'no') }),
  col.accessor('created_at', { header: 'Added', cell: (c) => <When at={c.getValue()} /> }),
];

interface Report {
  parts: Array<{ name: string; result: IngestResult }>;
  accepted: number;
  duplicates: number;
  rejected: Array<{ part: string; index: number; message: string }>;
}

function Upload({ sources, onDone }: { sources: Source[]; onDone: () => void }) {
  const [source, setSource] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [format, setFormat] = useState('');
  const [progress, setProgress] = useState<{ sent: number; total: number; part: string } | null>(null);
  const [report, setReport] = useState<Report | null>(null);
  const { error, busy, run } = useAction();

  async function upload(event: FormEvent) {
    event.preventDefault();
    if (!file || !source) return;
    setReport(null);
    const done = await run(async () => {
      setProgress({ sent: 0, total: file.size, part: `opening ${file.name}` });
      const parts = await partsOf(file);
      const total = parts.reduce((n, p) => n + p.body.size, 0);
      const out: Report = { parts: [], accepted: 0, duplicates: 0, rejected: [] };
      let before = 0;
      for (const part of parts) {
        const q = part.type === 'text/plain' && format ? `?format=${format}` : '';
        const result = await sendPart(source, part, q, (sent) => setProgress({ sent: before + sent, total, part: part.name }));
        before += part.body.size;
        out.parts.push({ name: part.name, result });
        out.accepted += result.accepted;
        out.duplicates += result.duplicates;
        for (const r of result.rejected) out.rejected.push({ part: part.name, index: r.index, message: r.errors.map((e) => `${e.field}: ${e.message}`).join('; ') });
      }
      setProgress({ sent: total, total, part: 'done' });
      return out;
    });
    if (done) {
      setReport(done);
      onDone();
    } else setProgress(null);
  }

  return (
    <form className="panel" onSubmit={upload} aria-labelledby="upload-title">
      <h2 id="upload-title">Upload a dump</h2>
      <p className="muted">Combolists and stealer logs (text), NDJSON, a JSON array, CSV with a header row; gzip and zip are opened in the browser. Up to 64 MiB a file (or a zip member) here; bigger ones with <code>threatmon import-leaks</code>.</p>
      <Choice label="Into the source" required value={source} onChange={setSource} any="choose a source" options={sources.map((s) => [s.id, s.name] as const)} />
      <Field label="File">
        <input type="file" required accept=".txt,.lst,.csv,.json,.ndjson,.jsonl,.gz,.zip" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      </Field>
      <Choice label="Text lines are" value={format} onChange={(v) => setFormat(v)} any="told from the lines" options={[['combo', 'a combolist (login:password)'], ['stealer', 'stealer-log lines (url:login:password)']]} />
      <button type="submit" className="primary" disabled={busy || !file || !source}>
        {busy ? 'Uploading…' : 'Upload'}
      </button>
      {progress && (
        <div className="progress">
          <progress max={progress.total || 1} value={progress.sent} aria-label="Upload progress" />
          <span aria-live="polite">
            {progress.part === 'done' ? 'Done.' : `${Math.round((100 * progress.sent) / (progress.total || 1))}% · ${progress.part}`}
          </span>
        </div>
      )}
      <ErrorNote error={error} action="upload records" />
      {report && (
        <section aria-label="Upload report" className="report">
          <h3>Report</h3>
          <p>
            {plural(report.accepted, 'record')} stored, {plural(report.duplicates, 'duplicate')} skipped, {plural(report.rejected.length, 'line')} rejected
            {report.parts.length > 1 ? ` across ${report.parts.length} files` : ''}.
          </p>
          {report.rejected.length > 0 && (
            <>
              <button type="button" onClick={() => download('rejects.csv', toCsv(['file', 'index', 'reason'], report.rejected.map((r) => [r.part, r.index, r.message])), 'text/csv')}>
                Download every reject (CSV)
              </button>
              <table>
                <caption>Rejected lines (the first 50)</caption>
                <thead>
                  <tr>
                    <th scope="col">File</th>
                    <th scope="col">Line or index</th>
                    <th scope="col">Why</th>
                  </tr>
                </thead>
                <tbody>
                  {report.rejected.slice(0, 50).map((r) => (
                    <tr key={`${r.part}:${r.index}`}>
                      <td>{r.part}</td>
                      <td>{r.index}</td>
                      <td>{r.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </section>
      )}
    </form>
  );
}

export function Sources() {
  const me = useMe();
  const [filters, setFilters] = useQueryState(['kind', 'search'] as const);
  const list = useLoad(() => must(api.GET('/api/v1/leaks/sources/', { params: { query: { ...query({ kind: filters.kind, search: filters.search }), page: filters.page, page_size: PAGE_SIZE } } })), [filters]);
  const all = useLoad(() => (me.is_staff ? must(api.GET('/api/v1/leaks/sources/', { params: { query: { page_size: 500, ordering: 'name' } } })) : Promise.resolve(null)), []);
  const [draft, setDraft, clearDraft] = useDraft('source-new', { name: '', kind: 'breach', domain: '', breach_date: '', description: '' });
  const { error, busy, run } = useAction();

  async function create(event: FormEvent) {
    event.preventDefault();
    const made = await run(() =>
      must(api.POST('/api/v1/leaks/sources/', { body: { name: draft.name, kind: draft.kind as Source['kind'], description: draft.description, ...(draft.domain ? { domain: draft.domain } : {}), ...(draft.breach_date ? { breach_date: draft.breach_date } : {}) } })),
    );
    if (made) {
      clearDraft();
      list.reload();
      all.reload();
    }
  }

  return (
    <>
      <PageTitle title="Sources and imports" />
      <form className="filters" aria-label="Filter sources" onSubmit={(e) => e.preventDefault()}>
        <Choice label="Kind" value={filters.kind} onChange={(v) => setFilters({ kind: v })} any="any" options={KINDS} />
        <Field label="Name">
          <input type="search" value={filters.search} onChange={(e) => setFilters({ search: e.target.value })} />
        </Field>
      </form>
      <LoadState loading={list.loading && !list.data} error={list.error} what="sources" />
      {list.data && (
        <>
          <DataTable caption="Leak sources" rows={list.data.results} columns={columns} empty="No source yet." />
          <Pager count={list.data.count} page={filters.page} pageSize={PAGE_SIZE} onPage={(page) => setFilters({ page })} />
        </>
      )}
      {me.is_staff ? (
        <div className="grid">
          <Upload sources={all.data?.results ?? []} onDone={() => list.reload()} />
          <form className="panel" onSubmit={create} aria-labelledby="new-source">
            <h2 id="new-source">New source</h2>
            <Field label="Name" error={fieldError(error, 'name')}>
              <input required maxLength={200} value={draft.name} onChange={(e) => setDraft({ name: e.target.value })} />
            </Field>
            <Choice label="Kind" error={fieldError(error, 'kind')} value={draft.kind} onChange={(v) => setDraft({ kind: v })} options={KINDS} />
            <Field label="Breached site" error={fieldError(error, 'domain')} hint="Its domain, if it is one service's data">
              <input value={draft.domain} onChange={(e) => setDraft({ domain: e.target.value })} />
            </Field>
            <Field label="Breach date" error={fieldError(error, 'breach_date')}>
              <input type="date" value={draft.breach_date} onChange={(e) => setDraft({ breach_date: e.target.value })} />
            </Field>
            <Field label="Description" error={fieldError(error, 'description')}>
              <textarea rows={2} value={draft.description} onChange={(e) => setDraft({ description: e.target.value })} />
            </Field>
            <ErrorNote error={error} action="create a source" />
            <button type="submit" disabled={busy}>
              Create source
            </button>
          </form>
        </div>
      ) : (
        <p className="notice">Sources are managed and loaded by the platform's staff: your organization searches and monitors them.</p>
      )}
    </>
  );
}
