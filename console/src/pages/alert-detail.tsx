import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import { api, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Field, PageTitle, When } from '../ui/bits';
import { useAction, useDraft, useLoad } from '../ui/load';
import { ErrorNote, LoadState } from '../ui/problem';
import { recordLine } from './alerts';

const TRIAGE = [
  ['acknowledged', 'Acknowledge'],
  ['resolved', 'Resolve'],
  ['false_positive', 'False positive'],
  ['new', 'Back to new'],
] as const;

export function AlertDetail({ id }: { id: string }) {
  const me = useMe();
  const [, navigate] = useLocation();
  const alert = useLoad(() => must(api.GET('/api/v1/monitoring/alerts/{id}/', { params: { path: { id } } })), [id]);
  const source = useLoad(async () => (alert.data ? must(api.GET('/api/v1/leaks/sources/{id}/', { params: { path: { id: alert.data.leak_record.source.id } } })) : null), [alert.data?.leak_record.source.id]);
  const [draft, setDraft, clearDraft] = useDraft(`alert-note:${id}`, { note: '' });
  const [said, setSaid] = useState('');
  const { error, busy, run } = useAction();
  const a = alert.data;
  const writer = can(me, 'analyst');

  async function change(body: { status?: (typeof TRIAGE)[number][0]; note?: string }) {
    const done = await run(() => must(api.PATCH('/api/v1/monitoring/alerts/{id}/', { params: { path: { id } }, body })));
    if (done) {
      setSaid(body.status ? `Status: ${done.status.replace('_', ' ')}.` : 'Note saved.');
      if (body.note !== undefined) clearDraft();
      alert.reload();
    }
  }
  async function escalate() {
    const incident = await run(() => must(api.POST('/api/v1/monitoring/alerts/{id}/escalate/', { params: { path: { id } }, body: {} })));
    if (incident) navigate(`/incidents/${incident.id}/`);
  }

  return (
    <>
      <PageTitle title={a ? `Alert: ${recordLine(a)}` : 'Alert'}>
        <Link href="/alerts/">All alerts</Link>
      </PageTitle>
      <LoadState loading={alert.loading && !a} error={alert.error} what="the alert" />
      {a && (
        <div className="columns">
          <section aria-label="The alert">
            <dl className="facts">
              <dt>Severity</dt>
              <dd>
                <Badge value={a.severity} kind="severity" />
              </dd>
              <dt>Status</dt>
              <dd>
                <Badge value={a.status} kind="status" />
              </dd>
              <dt>Monitor</dt>
              <dd>
                <Link href={`/monitors/${a.monitor.id}/`}>{a.monitor.name}</Link>
              </dd>
              <dt>Matched</dt>
              <dd>
                <code>{a.matched_term}</code> in {a.matched_field}
              </dd>
              <dt>Raised</dt>
              <dd>
                <When at={a.created_at} />
              </dd>
              <dt>Incident</dt>
              <dd>{a.incident ? <Link href={`/incidents/${a.incident}/`}>open the incident</Link> : <span className="muted">none</span>}</dd>
              <dt>Note</dt>
              <dd>{a.note || <span className="muted">none</span>}</dd>
            </dl>
            {writer && (
              <>
                <div className="toolbar" role="toolbar" aria-label="Triage">
                  {TRIAGE.filter(([s]) => s !== a.status).map(([status, text]) => (
                    <button key={status} type="button" disabled={busy} onClick={() => void change({ status })}>
                      {text}
                    </button>
                  ))}
                  {!a.incident && (
                    <button type="button" className="primary" disabled={busy} onClick={() => void escalate()}>
                      Escalate to an incident
                    </button>
                  )}
                </div>
                <form
                  onSubmit={(e) => {
                    e.preventDefault();
                    void change({ note: draft.note });
                  }}
                >
                  <Field label="Note">
                    <textarea rows={3} maxLength={10000} value={draft.note} onChange={(e) => setDraft({ note: e.target.value })} placeholder={a.note ?? ''} />
                  </Field>
                  <button type="submit" disabled={busy}>
                    Save note
                  </button>
                </form>
              </>
            )}
            <p aria-live="polite" className="said">
              {said}
            </p>
            <ErrorNote error={error} action="change this alert" />
          </section>
          <section aria-label="The leak record">
            <h2>Leak record</h2>
            <p className="muted">As the API shows it: passwords masked, never whole.</p>
            <dl className="facts">
              {(
                [
                  ['E-mail', a.leak_record.email],
                  ['Username', a.leak_record.username],
                  ['Domain', a.leak_record.domain],
                  ['IP address', a.leak_record.ip],
                  ['Phone', a.leak_record.phone],
                  ['Name', a.leak_record.full_name],
                  ['Password', a.leak_record.has_password ? `${a.leak_record.password_masked ?? '(hash only)'} · SHA-1 starts ${a.leak_record.password_sha1_prefix ?? '?'}` : null],
                  ['Record severity', a.leak_record.severity],
                  ['Leaked', a.leak_record.leaked_at && new Date(a.leak_record.leaked_at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })],
                ] as const
              )
                .filter(([, v]) => v)
                .map(([k, v]) => (
                  <div key={k} className="fact">
                    <dt>{k}</dt>
                    <dd>{v}</dd>
                  </div>
                ))}
              {Object.entries(a.leak_record.extra ?? {}).map(([k, v]) => (
                <div key={k} className="fact">
                  <dt>{k}</dt>
                  <dd>{String(v)}</dd>
                </div>
              ))}
            </dl>
            {a.leak_record.indicator_matches && (
              <div className="notice" role="note">
                <strong>Named by your indicators:</strong>
                <ul>
                  {a.leak_record.indicator_matches.map((m) => (
                    <li key={`${m.indicator}-${m.field}`}>
                      its {m.field.replace('_', ' ')} by {m.type} <code>{m.value}</code> from {m.feeds.map((f) => f.name).join(', ') || 'no feed'}
                      {m.confidence === null ? '' : `, confidence ${m.confidence}`}
                      {m.tlp ? `, TLP:${m.tlp.toUpperCase()}` : ''}
                    </li>
                  ))}
                </ul>
              </div>
            )}
            <h2>Source</h2>
            <LoadState loading={source.loading && !source.data} error={source.error} what="the source" />
            {source.data && (
              <dl className="facts">
                <dt>Name</dt>
                <dd>{source.data.name}</dd>
                <dt>Kind</dt>
                <dd>{source.data.kind.replace('_', ' ')}</dd>
                <dt>Breached site</dt>
                <dd>{source.data.domain ?? '—'}</dd>
                <dt>Breach date</dt>
                <dd>{source.data.breach_date ?? '—'}</dd>
                <dt>Records</dt>
                <dd>{source.data.record_count.toLocaleString()}</dd>
                <dt>Verified</dt>
                <dd>{source.data.is_verified ? 'yes' : 'no'}</dd>
                {source.data.description && (
                  <>
                    <dt>Description</dt>
                    <dd>{source.data.description}</dd>
                  </>
                )}
              </dl>
            )}
          </section>
        </div>
      )}
    </>
  );
}
