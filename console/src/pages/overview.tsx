import { Link } from 'wouter';
import { api, must } from '../api/client';
import { can, useMe } from '../session';
import { Badge, Card, PageTitle, When } from '../ui/bits';
import { Chart } from '../ui/chart';
import { SEVERITIES, SEVERITY_COLOURS } from '../ui/format';
import { useLoad } from '../ui/load';
import { LoadState } from '../ui/problem';

const WEEK_MS = 7 * 24 * 3600 * 1000;

export function Overview() {
  const me = useMe();
  const open = useLoad(
    () =>
      Promise.all(SEVERITIES.map(async (severity) => [severity, (await must(api.GET('/api/v1/monitoring/alerts/', { params: { query: { status: 'new,acknowledged', severity, page_size: 1 } } }))).count] as const)),
    [],
  );
  const stats = useLoad(() => must(api.GET('/api/v1/monitoring/stats/')), []);
  const monitors = useLoad(() => must(api.GET('/api/v1/monitoring/', { params: { query: { ordering: '-updated_at', page_size: 8 } } })), []);
  const tokens = useLoad(() => must(api.GET('/api/v1/tracking-tokens/', { params: { query: { ordering: '-last_exposed_at', page_size: 20 } } })), []);
  const usage = useLoad(() => must(api.GET('/api/v1/organization/usage/')), []);
  const channels = useLoad(() => must(api.GET('/api/v1/notifications/channels/', { params: { query: { page_size: 100 } } })), []);
  const webhooks = useLoad(() => (can(me, 'admin') ? must(api.GET('/api/v1/webhooks/', { params: { query: { page_size: 100 } } })) : Promise.resolve(null)), []);

  const triggered = (tokens.data?.results ?? []).filter((t) => t.last_exposed_at && Date.now() - Date.parse(t.last_exposed_at) < WEEK_MS);
  const failingChannels = (channels.data?.results ?? []).filter((c) => c.status !== 'healthy');
  const failingHooks = (webhooks.data?.results ?? []).filter((w) => w.failure_count > 0 || !w.is_active);
  const days = stats.data?.alerts_by_day ?? [];

  return (
    <>
      <PageTitle title="Overview" />
      <div className="grid">
        <Card title="Open alerts by severity" link={{ to: '/alerts/?status=new,acknowledged', text: 'Open the inbox' }}>
          <LoadState loading={open.loading} error={open.error} what="alerts" />
          <ul className="tiles">
            {(open.data ?? []).map(([severity, count]) => (
              <li key={severity}>
                <Link href={`/alerts/?status=new,acknowledged&severity=${severity}`} className={`tile severity-${severity}`}>
                  <strong>{count.toLocaleString()}</strong> <span>{severity}</span>
                </Link>
              </li>
            ))}
          </ul>
        </Card>
        <Card title="New exposures per day (30 days)">
          <LoadState loading={stats.loading} error={stats.error} what="statistics" />
          {stats.data && <Chart title="New alerts per day" labels={days.map((d) => d.date.slice(5))} series={[{ label: 'alerts', values: days.map((d) => d.count), colour: SEVERITY_COLOURS.high! }]} bars />}
        </Card>
        <Card title="Monitors" link={{ to: '/monitors/', text: 'Every monitor' }}>
          <LoadState loading={monitors.loading} error={monitors.error} what="monitors" />
          {stats.data && (
            <p>
              {stats.data.monitors.active} active, {stats.data.monitors.paused} paused
            </p>
          )}
          <ul className="plain">
            {(monitors.data?.results ?? []).map((m) => (
              <li key={m.id}>
                <Link href={`/monitors/${m.id}/`}>{m.name}</Link> <Badge value={m.status} kind="status" /> <span className="muted">last match</span> <When at={m.last_match_at} />
              </li>
            ))}
          </ul>
        </Card>
        <Card title="Tracking tokens triggered in 7 days" link={{ to: '/tokens/', text: 'Every token' }}>
          <LoadState loading={tokens.loading} error={tokens.error} what="tracking tokens" />
          {tokens.data && triggered.length === 0 && <p className="muted">None triggered.</p>}
          <ul className="plain">
            {triggered.map((t) => (
              <li key={t.id}>
                <Link href={`/tokens/${t.id}/`}>{t.name}</Link> ({t.kind.replace('_', ' ')}) <When at={t.last_exposed_at} />
              </li>
            ))}
          </ul>
        </Card>
        <Card title="Failing deliveries" link={{ to: '/integrations/', text: 'Integrations' }}>
          <LoadState loading={channels.loading} error={channels.error} what="channels" />
          {channels.data && failingChannels.length === 0 && failingHooks.length === 0 && <p className="muted">Every channel{webhooks.data ? ' and webhook' : ''} is healthy.</p>}
          <ul className="plain">
            {failingChannels.map((c) => (
              <li key={c.id}>
                Channel {c.name}: <Badge value={c.status} kind="status" /> {c.last_error}
              </li>
            ))}
            {failingHooks.map((w) => (
              <li key={w.id}>
                Webhook {w.url}: {w.failure_count} failures{w.is_active ? '' : ', disabled'}
              </li>
            ))}
          </ul>
        </Card>
        <Card title="Rate limit">
          <LoadState loading={usage.loading} error={usage.error} what="usage" />
          {usage.data && usage.data.limit === 0 && <p>Rate limits are off on this server.</p>}
          {usage.data && usage.data.limit > 0 && (
            <>
              <p>
                {usage.data.plan} plan: {(usage.data.limit - usage.data.remaining).toLocaleString()} of {usage.data.limit.toLocaleString()} requests used this minute (resets in {usage.data.reset_seconds} s).
              </p>
              <progress max={usage.data.limit} value={usage.data.limit - usage.data.remaining} aria-label="Rate limit used" />
            </>
          )}
        </Card>
      </div>
    </>
  );
}
