import nodemailer, { type Transporter } from 'nodemailer';
import { discordMessage, emailMessage, mattermostMessage, type Notice, slackMessage, teamsMessage } from '../../domain/notices.js';
import { send } from '../webhooks/index.js';
import type { ChannelKind } from './notifications.schemas.js';

/** What a target said to one message. */
export interface Outcome {
  ok: boolean;
  status_code: number | null;
  response: string | null;
  error: string | null;
  duration_ms: number;
}

/** The body each chat service's incoming webhook takes. */
export const CHAT_FORMATS: Record<Exclude<ChannelKind, 'email'>, (n: Notice) => object> = {
  slack: slackMessage,
  mattermost: mattermostMessage,
  discord: discordMessage,
  teams: teamsMessage,
};

/**
 * Sends notices: chat services by HTTP POST through the webhooks' guarded sender (5 s to connect,
 * 10 s in all, no redirect, private hosts refused unless allowed); e-mail through nodemailer to
 * THREATMON_SMTP_URL, which upgrades to TLS when the server offers STARTTLS.
 */
export class Transport {
  private mailer?: Transporter;

  constructor(private readonly config: { smtpUrl: string | null; smtpFrom: string; allowPrivateDestinations: boolean }) {}

  async deliver(kind: ChannelKind, target: string, notice: Notice): Promise<Outcome> {
    if (kind === 'email') return this.mail(target, notice);
    const r = await send(target, {}, JSON.stringify(CHAT_FORMATS[kind](notice)), this.config.allowPrivateDestinations);
    return { ok: r.ok, status_code: r.status_code, response: r.answer || null, error: r.error ?? (r.ok ? null : `answered ${r.status_code}${r.answer ? `: ${r.answer.slice(0, 200)}` : ''}`), duration_ms: r.duration_ms };
  }

  private async mail(to: string, notice: Notice): Promise<Outcome> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    if (!this.config.smtpUrl) return { ok: false, status_code: null, response: null, error: 'THREATMON_SMTP_URL is not set: e-mail cannot be sent', duration_ms: took() };
    // Bounded like the chat posts: a server that does not answer is a failed attempt, retried later.
    const url = new URL(this.config.smtpUrl);
    // Pooled: a channel's messages reuse one SMTP connection instead of opening one each.
    for (const [k, v] of Object.entries({ connectionTimeout: '5000', greetingTimeout: '5000', socketTimeout: '10000', pool: 'true' })) if (!url.searchParams.has(k)) url.searchParams.set(k, v);
    this.mailer ??= nodemailer.createTransport(url.toString());
    const m = emailMessage(notice);
    try {
      const info = await this.mailer.sendMail({ from: this.config.smtpFrom, to, subject: m.subject, text: m.text, html: m.html });
      const response = String(info.response ?? '');
      return { ok: true, status_code: Number(response.slice(0, 3)) || null, response: response.slice(0, 1024), error: null, duration_ms: took() };
    } catch (err) {
      const e = err as Error & { responseCode?: number; response?: string };
      return { ok: false, status_code: e.responseCode ?? null, response: e.response?.slice(0, 1024) ?? null, error: e.message.slice(0, 500), duration_ms: took() };
    }
  }

  close(): void {
    this.mailer?.close();
  }
}
