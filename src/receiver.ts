// What a product receiving scimd's webhooks imports: `import { verifyWebhook } from 'scimd'`.
export { type Verification, type VerifyOptions, verifyWebhook } from './webhooks/signing.js';
