// What a product receiving scimd's webhooks or reading its feed imports: `import { verifyWebhook }
// from 'scimd'`, and the types of every change and delivery (`Change`, `WebhookDelivery`, …).
export * from './changes/change-types.js';
export { type Verification, type VerifyOptions, verifyWebhook } from './webhooks/signing.js';
