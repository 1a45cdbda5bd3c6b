import { type FormEvent, useEffect, useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Choice, Field, PageTitle, When } from '../ui/bits';
import { SEVERITIES } from '../ui/format';
import { useAction, useLoad } from '../ui/load';
import { ErrorNote, fieldError, LoadState } from '../ui/problem';
import { termsOf, TERM_HINTS } from './monitors';

export function MonitorDetail({ id }: { id: string }) {
  const me = useMe();
  const [, navigate] = useLocation();
  const monitor = useLoad(() => must(api.GET('/api/v1/monitoring/{id}/', { params: { path: { id } } })), [id]);
  const scans = useLoad(() => must(api.GET('/api/v1/monitoring/{id}/scans/', { params: { path: { id }, query: { page_size: 10 } } })), [id]);
  const corpus = useLoad(() => must(api.GET('/api/v1/leaks/stats/')), []);
  const [form, setForm] = useState({ name: '', terms: '', severity: '', description: '' });
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const m = monitor.data;
  const writer = can(me, 'analyst');
  const running = (scans.data?.results ?? []).some((s) => s.status === 'queued' || s.status === 'running');

  useEffect(() => {
    if (m) setForm({ name: m.name, terms: m.terms.join('\n'), severity: m.severity ?? '', description: m.description ?? '' });
  }, [m]);
  // A scan under way is followed until it ends (every 2 s; nothing is polled once it has).
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => {
      scans.reload();
      monitor.reload();
    }, 2000);
    return () => clearInterval(timer);
  }, [running, scans.reload, monitor.reload]);

  async function save(event: FormEvent) {
    event.preventDefault();
    const done = await run(() =>
      must(api.PATCH('/api/v1/monitoring/{id}/', { params: { path: { id } }, body: { name: form.name, terms: termsOf(form.terms), severity: (form.severity || null) as 'low' | null, description: form.description } })),
    );
    if (done) {
      setSaid('Saved.');
      monitor.reload();
    }
  }
  async function patch(body: { status: 'active' | 'paused' }) {
    if (await run(() => must(api.PATCH('/api/v1/monitoring/{id}/', { params: { path: { id } }, body })))) {
      setSaid(body.status === 'paused' ? 'Paused.' : 'Resumed.');
      monitor.reload();
    }
  }
  async function rescan() {
    if (await run(() => must(api.POST('/api/v1/monitoring/{id}/scan/', { params: { path: { id } } })))) {
      setSaid('Scan queued.');
      scans.reload();
    }
  }
  async function remove() {
    if (!window.confirm('Delete this monitor and its alerts? Incidents keep their data.')) return;
    if ((await run(() => must(api.DELETE('/api/v1/monitoring/{id}/', { params: { path: { id } } })))) !== undefined) navigate('/monitors/');
  }

  return (
    <>
      <PageTitle title={m ? `Monitor: ${m.name}` : 'Monitor'}>
        <Link href="/monitors/">All monitors</Link>
      </PageTitle>
      <LoadState loading={monitor.loading && !m} error={monitor.error} what="the monitor" />
      {m && (
        <div className="columns">
          <section aria-label="The monitor">
            <dl className="facts">
              <dt>Type</dt>
              <dd>{m.type}</dd>
              <dt>Status</dt>
              <dd>
                <Badge value={m.status} kind="status" />
              </dd>
              <dt>Alerts</dt>
              <dd>
                <Link href={`/alerts/?monitor=${m.id}`}>
                  {m.alert_count} in all, {m.alerts_open} open
                </Link>
              </dd>
              <dt>Last match</dt>
              <dd>
                <When at={m.last_match_at} />
              </dd>
              <dt>Last scan</dt>
              <dd>
                <When at={m.last_scan_at} />
              </dd>
            </dl>
            {writer ? (
              <form onSubmit={save} className="panel" aria-label="Edit the monitor">
                <Field label="Name" error={fieldError(error, 'name')}>
                  <input required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
                </Field>
                <Field label="Terms" error={fieldError(error, 'terms')} hint={TERM_HINTS[m.type]}>
                  <textarea rows={5} value={form.terms} onChange={(e) => setForm({ ...form, terms: e.target.value })} />
                </Field>
                <Choice label="Severity of its alerts" error={fieldError(error, 'severity')} value={form.severity} onChange={(v) => setForm({ ...form, severity: v })} any="from what each finds" options={SEVERITIES} />
                <Field label="Description" error={fieldError(error, 'description')}>
                  <textarea rows={2} value={form.description} onChange={(e) => setForm({ ...form, description: e.target.value })} />
                </Field>
                <div className="toolbar">
                  <button type="submit" className="primary" disabled={busy}>
                    Save
                  </button>
                  <button type="button" disabled={busy} onClick={() => void patch({ status: m.status === 'active' ? 'paused' : 'active' })}>
                    {m.status === 'active' ? 'Pause' : 'Resume'}
                  </button>
                  <button type="button" disabled={busy || running} onClick={() => void rescan()}>
                    Scan the corpus again
                  </button>
                  {can(me, 'admin') && (
                    <button type="button" className="danger" disabled={busy} onClick={() => void remove()}>
                      Delete
                    </button>
                  )}
                </div>
              </form>
            ) : (
              <p>Terms: {m.terms.join(', ')}</p>
            )}
            <p aria-live="polite" className="said">
              {said}
            </p>
            <ErrorNote error={error} action="change this monitor" />
          </section>
          <section aria-label="Scans">
            <h2>Scans of the corpus</h2>
            <LoadState loading={scans.loading && !scans.data} error={scans.error} what="scans" />
            <ul className="plain">
              {(scans.data?.results ?? []).map((s) => {
                const total = corpus.data?.total_records ?? 0;
                return (
                  <li key={s.id} className="scan">
                    <Badge value={s.status} kind="status" /> {s.reason === 'created' ? 'Backfill' : 'Re-scan'}, <When at={s.created_at} />: {s.records_scanned.toLocaleString()} records read, {s.alerts_raised} alerts raised
                    {(s.status === 'queued' || s.status === 'running') && total > 0 && (
                      <progress max={total} value={Math.min(total, s.records_scanned)} aria-label={`Scan progress: ${s.records_scanned} of about ${total} records`} />
                    )}
                  </li>
                );
              })}
            </ul>
            {scans.data && scans.data.results.length === 0 && <p className="muted">No scan yet.</p>}
          </section>
        </div>
      )}
    </>
  );
}
