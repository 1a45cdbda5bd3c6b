import type { WebhookRow } from './webhooks.repository.js';
import type { WebhookOut } from './webhooks.schemas.js';

export function presentWebhook(r: WebhookRow, secret?: string): WebhookOut {
  return {
    id: r.id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    description: r.description,
    is_active: Boolean(r.is_active),
    ...(secret !== undefined && { secret }),
    failure_count: Number(r.failure_count),
    last_delivery_at: r.last_delivery_at,
    created_at: r.created_at,
  };
}
