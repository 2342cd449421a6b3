// The admin API's webhook endpoints, under /admin/v1/webhooks.
import type Router from '@koa/router';
import * as webhooks from './webhooks.service.js';

export function registerWebhookRoutes(router: Router, deps: webhooks.WebhookDeps): void {
  router.get('/webhooks/events', (ctx) => {
    ctx.body = webhooks.eventTypes();
  });
  router.get('/webhooks', async (ctx) => {
    ctx.body = await webhooks.listEndpoints(deps);
  });
  router.post('/webhooks', async (ctx) => {
    ctx.status = 201;
    ctx.body = await webhooks.createEndpoint(deps, ctx.request.body);
  });
  router.get('/webhooks/:webhookId', async (ctx) => {
    ctx.body = await webhooks.showEndpoint(deps, ctx.params.webhookId!);
  });
  router.patch('/webhooks/:webhookId', async (ctx) => {
    ctx.body = await webhooks.updateEndpoint(deps, ctx.params.webhookId!, ctx.request.body);
  });
  router.delete('/webhooks/:webhookId', async (ctx) => {
    await webhooks.deleteEndpoint(deps, ctx.params.webhookId!);
    ctx.status = 204;
  });
  router.post('/webhooks/:webhookId/rotate-secret', async (ctx) => {
    ctx.body = await webhooks.rotateSecret(deps, ctx.params.webhookId!);
  });
  router.get('/webhooks/:webhookId/deliveries', async (ctx) => {
    ctx.body = await webhooks.listDeliveries(deps, ctx.params.webhookId!, ctx.query);
  });
  router.post('/webhooks/:webhookId/deliveries/:position/redeliver', async (ctx) => {
    ctx.body = await webhooks.redeliver(deps, ctx.params.webhookId!, ctx.params.position!);
  });
  router.post('/webhooks/:webhookId/ping', async (ctx) => {
    ctx.body = await webhooks.ping(deps, ctx.params.webhookId!);
  });
}
