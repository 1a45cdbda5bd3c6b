import { createColumnHelper } from '@tanstack/react-table';
import { type FormEvent, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, type Item, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, download, Choice, Field, PageTitle, When } from '../ui/bits';
import { plural, SEVERITIES } from '../ui/format';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { DataTable } from '../ui/table';
import { INCIDENT_STATUSES, type Incident } from './incidents';

type Ioc = Item<'/api/v1/incidents/{id}/iocs/'>;
const IOC_TYPES = ['ipv4', 'ipv6', 'cidr', 'domain', 'url', 'email', 'md5', 'sha1', 'sha256', 'sha512', 'filename', 'cve', 'asn', 'other'] as const;
type IocType = (typeof IOC_TYPES)[number];

const col = createColumnHelper<Ioc>();
const columns = [col.accessor('type', { header: 'Type' }), col.accessor('value', { header: 'Value', cell: (c) => <code>{c.getValue()}</code> }), col.accessor('description', { header: 'Description' }), col.accessor('created_at', { header: 'Added', cell: (c) => <When at={c.getValue()} /> })];

/** An IOC event's IOC, from its changes ({field: {from, to}}). */
function describeIoc(changes: Record<string, unknown>): string {
  const side = (f: string) => {
    const c = changes[f] as { from?: unknown; to?: unknown } | undefined;
    return String(c?.to ?? c?.from ?? '');
  };
  return `${side('type')} ${side('value')}`.trim();
}

/** Pasted lines as IOCs: `value` with the type chosen, or `type,value` when the type is per line. */
function parseLines(text: string, type: string): Array<{ line: number; type: string; value: string }> {
  return text
    .split('\n')
    .map((raw, i) => ({ raw: raw.trim(), line: i + 1 }))
    .filter((l) => l.raw)
    .map(({ raw, line }) => {
      if (type !== 'per-line') return { line, type, value: raw };
      const comma = raw.indexOf(',');
      return comma < 0 ? { line, type: '', value: raw } : { line, type: raw.slice(0, comma).trim().toLowerCase(), value: raw.slice(comma + 1).trim() };
    });
}

export function IncidentDetail({ id }: { id: string }) {
  const me = useMe();
  const [, navigate] = useLocation();
  const incident = useLoad(() => must(api.GET('/api/v1/incidents/{id}/', { params: { path: { id } } })), [id]);
  const iocs = useLoad(() => must(api.GET('/api/v1/incidents/{id}/iocs/', { params: { path: { id }, query: { page_size: 500 } } })), [id]);
  const events = useLoad(() => must(api.GET('/api/v1/incidents/{id}/events/', { params: { path: { id }, query: { page_size: 20 } } })), [id]);
  const [one, setOne, clearOne] = useDraft(`ioc-new:${id}`, { type: 'domain', value: '', description: '' });
  const [paste, setPaste, clearPaste] = useDraft(`ioc-paste:${id}`, { type: 'per-line', text: '' });
  const [lineErrors, setLineErrors] = useState<Array<{ line: number; message: string }>>([]);
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const i = incident.data;
  const writer = can(me, 'analyst');

  const refresh = () => {
    incident.reload();
    iocs.reload();
    events.reload();
  };
  async function patch(body: { status?: Incident['status']; severity?: Incident['severity'] }) {
    if (await run(() => must(api.PATCH('/api/v1/incidents/{id}/', { params: { path: { id } }, body })))) {
      setSaid(body.status ? `Status: ${body.status}.` : `Severity: ${body.severity}.`);
      refresh();
    }
  }
  async function addOne(event: FormEvent) {
    event.preventDefault();
    if (await run(() => must(api.POST('/api/v1/incidents/{id}/iocs/', { params: { path: { id } }, body: { type: one.type as IocType, value: one.value, description: one.description } })))) {
      clearOne();
      setSaid('IOC added.');
      refresh();
    }
  }
  async function addMany(event: FormEvent) {
    event.preventDefault();
    const lines = parseLines(paste.text, paste.type);
    const unknown = lines.filter((l) => !IOC_TYPES.includes(l.type as IocType)).map((l) => ({ line: l.line, message: l.type ? `unknown type "${l.type}" (one of ${IOC_TYPES.join(', ')})` : 'write it as type,value' }));
    setLineErrors(unknown);
    if (unknown.length || !lines.length) return;
    const body = lines.map((l) => ({ type: l.type as IocType, value: l.value }));
    const done = await run(() => must(api.POST('/api/v1/incidents/{id}/iocs/', { params: { path: { id } }, body })));
    if (!done || !('created' in done)) return;
    const rejected = done.rejected.map((r) => ({ line: lines[r.index]!.line, message: r.errors.map((e) => `${e.field}: ${e.message}`).join('; ') }));
    setLineErrors(rejected);
    setSaid(`${plural(done.created, 'IOC')} added, ${plural(done.duplicates, 'duplicate')} skipped, ${plural(rejected.length, 'line')} refused.`);
    // Keep only the refused lines in the box, to correct and send again.
    const refused = new Set(rejected.map((r) => r.line));
    setPaste({ text: paste.text.split('\n').filter((_, n) => refused.has(n + 1)).join('\n') });
    if (!rejected.length) clearPaste();
    refresh();
  }
  async function exportStix() {
    const bundle = await run(() => must(api.GET('/api/v1/incidents/{id}/export/', { params: { path: { id }, query: { format: 'stix' } }, parseAs: 'text' })));
    if (bundle) download(`incident-${id}.stix.json`, bundle as unknown as string, 'application/stix+json');
  }
  async function remove() {
    if (!window.confirm('Delete this incident and its IOCs?')) return;
    if ((await run(() => must(api.DELETE('/api/v1/incidents/{id}/', { params: { path: { id } } })))) !== undefined) navigate('/incidents/');
  }

  return (
    <>
      <PageTitle title={i ? i.title : 'Incident'}>
        <Link href="/incidents/">All incidents</Link>
      </PageTitle>
      <LoadState loading={incident.loading && !i} error={incident.error} what="the incident" />
      {i && (
        <div className="columns">
          <section aria-label="The incident">
            <dl className="facts">
              <dt>Status</dt>
              <dd>
                <Badge value={i.status} kind="status" />
              </dd>
              <dt>Severity</dt>
              <dd>
                <Badge value={i.severity} kind="severity" />
              </dd>
              <dt>TLP</dt>
              <dd>{i.tlp}</dd>
              <dt>Tags</dt>
              <dd>{i.tags.join(', ') || '—'}</dd>
              <dt>Opened</dt>
              <dd>
                <When at={i.created_at} />
              </dd>
              {i.source_alert && (
                <>
                  <dt>From alert</dt>
                  <dd>
                    <Link href={`/alerts/${i.source_alert}/`}>the alert</Link>
                  </dd>
                </>
              )}
            </dl>
            {i.description && <p className="prose">{i.description}</p>}
            <div className="toolbar">
              {writer && (
                <>
                  <Choice label="Change status" value={i.status} onChange={(v) => void patch({ status: v as Incident['status'] })} disabled={busy} options={INCIDENT_STATUSES} />
                  <Choice label="Change severity" value={i.severity} onChange={(v) => void patch({ severity: v as Incident['severity'] })} disabled={busy} options={SEVERITIES} />
                </>
              )}
              <button type="button" onClick={() => void exportStix()}>
                Download the STIX 2.1 bundle
              </button>
              {can(me, 'admin') && (
                <button type="button" className="danger" onClick={() => void remove()}>
                  Delete
                </button>
              )}
            </div>
            <p aria-live="polite" className="said">
              {said}
            </p>
            <ErrorNote error={error} action="change this incident" />
            <h2>Activity</h2>
            <ol className="timeline">
              {(events.data?.results ?? []).map((e) => (
                <li key={e.id}>
                  <When at={e.created_at} /> {e.kind.replace('_', ' ')}
                  {e.kind.startsWith('ioc_') && e.changes ? `: ${describeIoc(e.changes)}` : e.changes && Object.keys(e.changes).length > 0 && `: ${Object.keys(e.changes).join(', ')}`}
                </li>
              ))}
            </ol>
          </section>
          <section aria-label="Indicators of compromise">
            <h2>IOCs ({i.ioc_count})</h2>
            <LoadState loading={iocs.loading && !iocs.data} error={iocs.error} what="IOCs" />
            {iocs.data && <DataTable caption="IOCs" rows={iocs.data.results} columns={columns} empty="No IOC yet." />}
            {writer && (
              <>
                <form className="panel" onSubmit={addOne} aria-labelledby="add-ioc">
                  <h3 id="add-ioc">Add an IOC</h3>
                  <Choice label="Type" value={one.type} onChange={(v) => setOne({ type: v })} options={IOC_TYPES} />
                  <Field label="Value" error={fieldError(error, 'value')} hint="Defanged forms (hxxp, [.]) are accepted">
                    <input required value={one.value} onChange={(e) => setOne({ value: e.target.value })} />
                  </Field>
                  <Field label="Description" error={fieldError(error, 'description')}>
                    <input value={one.description} onChange={(e) => setOne({ description: e.target.value })} />
                  </Field>
                  <button type="submit" disabled={busy}>
                    Add
                  </button>
                </form>
                <form className="panel" onSubmit={addMany} aria-labelledby="paste-iocs">
                  <h3 id="paste-iocs">Paste a list</h3>
                  <Choice label="Type of every line" value={paste.type} onChange={(v) => setPaste({ type: v })} options={[['per-line', 'given on each line: type,value'], ...IOC_TYPES]} />
                  <Field label="IOCs, one per line">
                    <textarea rows={6} value={paste.text} onChange={(e) => setPaste({ text: e.target.value })} aria-describedby="paste-errors" />
                  </Field>
                  <ul id="paste-errors" className="line-errors" aria-live="polite">
                    {lineErrors.map((e) => (
                      <li key={e.line}>
                        Line {e.line}: {e.message}
                      </li>
                    ))}
                  </ul>
                  <button type="submit" disabled={busy || !paste.text.trim()}>
                    Add the list
                  </button>
                </form>
              </>
            )}
          </section>
        </div>
      )}
    </>
  );
}
