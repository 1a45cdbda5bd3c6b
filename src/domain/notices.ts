import { SEVERITIES } from './leak-record.js';

/**
 * What a notification says, before any chat or mail format: built from an event's data with the
 * personal-data rule applied (a channel that may not carry personal data gets the monitor, the kind
 * of term found, the source and the severity, never an e-mail address, a username, a password mask,
 * an IP address or the term itself), then written as Slack Block Kit, Mattermost's Slack-compatible
 * attachments, Discord embeds, a Teams Adaptive Card or a multipart e-mail. Pure.
 */
export interface Notice {
  title: string;
  /** One line for previews, push notifications and fallbacks. */
  summary: string;
  severity: string | null;
  facts: Array<{ label: string; value: string }>;
  /** The console's page for the record (served by threatmon at /). */
  link: string;
  at: string;
}

export interface DigestItem {
  event_type: string;
  data: Record<string, unknown>;
}

const RANK = Object.fromEntries(SEVERITIES.map((s, i) => [s, i])) as Record<string, number>;
const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));
const obj = (v: unknown) => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
/** The names of the feeds of an indicator match. */
const feedNames = (m: Record<string, unknown>) => (Array.isArray(m.feeds) ? m.feeds.map((f) => str(obj(f).name)).join(', ') : '');

/** The notice of one event. `base`: the public URL the links start with. */
export function noticeOf(eventType: string, data: Record<string, unknown>, options: { personalData: boolean; base: string }): Notice {
  const { personalData, base } = options;
  const at = str(data.updated_at || data.created_at || data.occurred_at);
  if (eventType.startsWith('alert.')) {
    const monitor = obj(data.monitor);
    const record = obj(data.leak_record);
    const source = str(obj(record.source).name);
    const facts = [
      { label: 'Monitor', value: str(monitor.name) },
      { label: 'Found', value: str(data.matched_field) },
      { label: 'Source', value: source },
      { label: 'Severity', value: str(data.severity) },
      { label: 'Status', value: str(data.status) },
    ];
    if (personalData) {
      facts.push({ label: 'Term', value: str(data.matched_term) });
      for (const [label, key] of [['E-mail', 'email'], ['Username', 'username'], ['IP address', 'ip'], ['Password', 'password_masked']] as const) {
        if (record[key]) facts.push({ label, value: str(record[key]) });
      }
    }
    const verb = eventType === 'alert.created' ? 'New alert' : `Alert ${str(data.status)}`;
    return {
      title: `${verb}: ${str(monitor.name)}`,
      summary: `${verb} (${str(data.severity)}): ${str(monitor.name)} found a ${str(data.matched_field)} in ${source}`,
      severity: str(data.severity) || null,
      facts,
      link: `${base}/alerts/${str(data.id)}/`,
      at,
    };
  }
  if (eventType === 'tracking_token.exposed') {
    const facts = [
      { label: 'Channel', value: str(data.channel) },
      { label: 'When', value: str(data.occurred_at) },
    ];
    if (data.leak_source) facts.push({ label: 'Source', value: str(obj(data.leak_source).name) });
    const matches = Array.isArray(data.indicator_matches) ? data.indicator_matches.map(obj) : [];
    if (matches.length) facts.push({ label: 'Indicators', value: matches.map((m) => `${str(m.type)} (${feedNames(m)})`).join('; ') });
    if (personalData) {
      if (data.source_ip) facts.push({ label: 'IP address', value: str(data.source_ip) });
      if (data.user_agent) facts.push({ label: 'User agent', value: str(data.user_agent) });
    }
    return {
      title: 'Tracking token triggered',
      summary: `A tracking token was triggered (${str(data.channel)})${matches.length ? ' from what an indicator names' : ''}`,
      severity: str(data.severity) || 'high',
      facts,
      link: `${base}/tokens/${str(data.token)}/`,
      at,
    };
  }
  if (eventType === 'indicator.matched') {
    const match = obj(data.match);
    const where = data.seen_in === 'tracking_token' ? 'a tracking token hit' : `a leak record of ${str(obj(data.leak_source).name)}`;
    const facts = [
      { label: 'Seen in', value: where },
      { label: 'Indicator', value: `${str(match.type)} (${str(match.field)})` },
      { label: 'Feeds', value: feedNames(match) },
      { label: 'Confidence', value: str(match.confidence) },
      { label: 'TLP', value: str(match.tlp) },
    ];
    // An indicator's value may be an address or an e-mail: personal data.
    if (personalData) facts.push({ label: 'Value', value: str(match.value) });
    return {
      title: `Indicator matched: ${str(match.type)} in ${where}`,
      summary: `An indicator (${str(match.type)}, ${feedNames(match)}) named ${where}`,
      severity: str(data.severity) || null,
      facts,
      link: data.seen_in === 'tracking_token' ? `${base}/tokens/${str(data.tracking_token)}/` : `${base}/leaks/`,
      at: str(data.occurred_at),
    };
  }
  if (eventType.startsWith('incident.')) {
    const verb = eventType === 'incident.created' ? 'New incident' : 'Incident updated';
    return {
      title: `${verb}: ${str(data.title)}`,
      summary: `${verb} (${str(data.severity)}, ${str(data.status)}): ${str(data.title)}`,
      severity: str(data.severity) || null,
      facts: [
        { label: 'Status', value: str(data.status) },
        { label: 'Severity', value: str(data.severity) },
        { label: 'TLP', value: str(data.tlp) },
        { label: 'IOCs', value: str(data.ioc_count) },
      ],
      link: `${base}/incidents/${str(data.id)}/`,
      at,
    };
  }
  if (eventType.startsWith('ioc.')) {
    const verb = { 'ioc.created': 'IOC added', 'ioc.updated': 'IOC changed', 'ioc.deleted': 'IOC removed' }[eventType] ?? 'IOC';
    return {
      title: `${verb}: ${str(data.type)} ${str(data.value)}`,
      summary: `${verb}: ${str(data.type)} ${str(data.value)}`,
      severity: null,
      facts: [
        { label: 'Type', value: str(data.type) },
        { label: 'Value', value: str(data.value) },
        { label: 'TLP', value: str(data.tlp) },
      ],
      link: `${base}/incidents/${str(data.incident)}/`,
      at,
    };
  }
  if (eventType === 'monitor.scan_completed') {
    return {
      title: 'Monitor scan completed',
      summary: `A monitor scan completed: ${str(data.records_scanned)} records read, ${str(data.alerts_raised)} alerts raised`,
      severity: null,
      facts: [
        { label: 'Records read', value: str(data.records_scanned) },
        { label: 'Alerts raised', value: str(data.alerts_raised) },
      ],
      link: `${base}/monitors/${str(data.monitor)}/`,
      at,
    };
  }
  return { title: eventType, summary: eventType, severity: null, facts: [], link: `${base}/`, at };
}

/** The notice of a minute's overflow: how many, of what, the highest severity, the top items. */
export function digestOf(items: DigestItem[], options: { personalData: boolean; base: string; windowStart: string; top?: number }): Notice {
  const notices = items.map((i) => ({ item: i, notice: noticeOf(i.event_type, i.data, options) }));
  const alerts = items.filter((i) => i.event_type === 'alert.created');
  const monitors = new Set(alerts.map((i) => str(obj(i.data.monitor).id)));
  const highest = notices.reduce<string | null>((h, { notice }) => (notice.severity && (h === null || (RANK[notice.severity] ?? -1) > (RANK[h] ?? -1)) ? notice.severity : h), null);
  const what = alerts.length === items.length ? `${items.length} new alerts on ${monitors.size} monitor${monitors.size === 1 ? '' : 's'}` : `${items.length} more events`;
  const summary = `${what}${highest ? `, highest severity ${highest}` : ''}`;
  const top = [...notices].sort((a, b) => (RANK[b.notice.severity ?? ''] ?? -1) - (RANK[a.notice.severity ?? ''] ?? -1)).slice(0, options.top ?? 5);
  return {
    title: `Digest: ${summary}`,
    summary,
    severity: highest,
    facts: top.map(({ notice }) => ({ label: notice.severity ?? 'event', value: notice.summary })),
    link: alerts.length === items.length ? `${options.base}/alerts/?status=new` : `${options.base}/`,
    at: options.windowStart,
  };
}

const COLORS: Record<string, number> = { low: 0x2e86de, medium: 0xf1c40f, high: 0xe67e22, critical: 0xc0392b };
const colorOf = (n: Notice) => COLORS[n.severity ?? ''] ?? 0x95a5a6;
const hex = (c: number) => `#${c.toString(16).padStart(6, '0')}`;

/** Slack: Block Kit (header, the facts as fields, a button to the record), `text` as the fallback. */
export function slackMessage(n: Notice) {
  return {
    text: n.summary,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: n.title.slice(0, 150) } },
      ...(n.facts.length ? [{ type: 'section', fields: n.facts.slice(0, 10).map((f) => ({ type: 'mrkdwn', text: `*${f.label}*\n${f.value.slice(0, 1900)}` })) }] : []),
      { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Open in threatmon' }, url: n.link }] },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `threatmon · ${n.at}` }] },
    ],
  };
}

/** Mattermost: its Slack-compatible incoming-webhook format (text and one attachment with fields). */
export function mattermostMessage(n: Notice) {
  return {
    text: n.summary,
    attachments: [
      {
        fallback: n.summary,
        color: hex(colorOf(n)),
        title: n.title,
        title_link: n.link,
        fields: n.facts.map((f) => ({ short: f.value.length < 40, title: f.label, value: f.value })),
        footer: 'threatmon',
      },
    ],
  };
}

/** Discord: one embed (title linking to the record, fields, the severity's colour, timestamp). */
export function discordMessage(n: Notice) {
  return {
    content: n.summary.slice(0, 2000),
    embeds: [
      {
        title: n.title.slice(0, 256),
        url: n.link,
        color: colorOf(n),
        fields: n.facts.slice(0, 25).map((f) => ({ name: f.label.slice(0, 256), value: (f.value || '-').slice(0, 1024), inline: f.value.length < 40 })),
        ...(n.at ? { timestamp: n.at } : {}),
        footer: { text: 'threatmon' },
      },
    ],
  };
}

/** Teams: a message with an Adaptive Card (1.4), as Teams' Workflows incoming webhooks take it. */
export function teamsMessage(n: Notice) {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          msteams: { width: 'Full' },
          body: [
            { type: 'TextBlock', text: n.title, weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'TextBlock', text: n.summary, wrap: true, isSubtle: true },
            { type: 'FactSet', facts: n.facts.map((f) => ({ title: f.label, value: f.value })) },
          ],
          actions: [{ type: 'Action.OpenUrl', title: 'Open in threatmon', url: n.link }],
        },
      },
    ],
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** E-mail: subject, a text part and an HTML part, each with the link back to the record. */
export function emailMessage(n: Notice) {
  const text = `${n.summary}\n\n${n.facts.map((f) => `${f.label}: ${f.value}`).join('\n')}\n\nOpen in threatmon: ${n.link}\n`;
  const rows = n.facts.map((f) => `<tr><th align="left" style="padding:4px 12px 4px 0">${escapeHtml(f.label)}</th><td style="padding:4px 0">${escapeHtml(f.value)}</td></tr>`).join('');
  const html =
    `<!doctype html><html><body style="font-family:sans-serif;max-width:600px;margin:auto">` +
    `<h2 style="border-left:6px solid ${hex(colorOf(n))};padding-left:8px">${escapeHtml(n.title)}</h2>` +
    `<p>${escapeHtml(n.summary)}</p><table>${rows}</table>` +
    `<p><a href="${escapeHtml(n.link)}" style="display:inline-block;padding:10px 16px;background:#1f6feb;color:#fff;text-decoration:none;border-radius:4px">Open in threatmon</a></p>` +
    `</body></html>`;
  return { subject: `[threatmon] ${n.title}`.slice(0, 200), text, html };
}
