// The admin API's webhook endpoints, under /admin/v1/webhooks.
import type { Audited } from '../audit/audited-action.js';
import type { Routes } from '../http/route-state.js';
import * as webhooks from './webhooks.service.js';

export function registerWebhookRoutes(
  router: Routes,
  deps: webhooks.WebhookDeps & { audited: Audited },
): void {
  const { audited } = deps;
  router.get('/webhooks/events', (ctx) => {
    ctx.body = webhooks.eventTypes();
  });
  router.get('/webhooks', async (ctx) => {
    ctx.body = await webhooks.listEndpoints(deps);
  });
  router.post('/webhooks', audited('webhook.create', 'created'), async (ctx) => {
    const created = await webhooks.createEndpoint(deps, ctx.request.body);
    ctx.status = 201;
    ctx.body = created;
  });
  router.get('/webhooks/:webhookId', async (ctx) => {
    ctx.body = await webhooks.showEndpoint(deps, ctx.params.webhookId!);
  });
  router.patch('/webhooks/:webhookId', audited('webhook.update', 'webhookId'), async (ctx) => {
    ctx.body = await webhooks.updateEndpoint(deps, ctx.params.webhookId!, ctx.request.body);
  });
  router.delete('/webhooks/:webhookId', audited('webhook.delete', 'webhookId'), async (ctx) => {
    await webhooks.deleteEndpoint(deps, ctx.params.webhookId!);
    ctx.status = 204;
  });
  router.post(
    '/webhooks/:webhookId/rotate-secret',
    audited('webhook.rotate_secret', 'webhookId'),
    async (ctx) => {
      ctx.body = await webhooks.rotateSecret(deps, ctx.params.webhookId!);
    },
  );
  router.get('/webhooks/:webhookId/deliveries', async (ctx) => {
    ctx.body = await webhooks.listDeliveries(deps, ctx.params.webhookId!, ctx.query);
  });
  router.post(
    '/webhooks/:webhookId/deliveries/:position/redeliver',
    audited('webhook.redeliver', 'webhookId'),
    async (ctx) => {
      ctx.body = await webhooks.redeliver(deps, ctx.params.webhookId!, ctx.params.position!);
    },
  );
  router.post('/webhooks/:webhookId/ping', async (ctx) => {
    ctx.body = await webhooks.ping(deps, ctx.params.webhookId!);
  });
}
