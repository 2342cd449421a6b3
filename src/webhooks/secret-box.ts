// Webhook signing secrets are stored encrypted (AES-256-GCM) with a key that is not in the database:
// derived from SCIMD_SECRET_KEY, or from the admin token when that is not set. A dump of the database
// alone does not let anyone sign deliveries.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 1;

export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    this.key = Buffer.from(hkdfSync('sha256', keyMaterial, 'scimd', 'webhook secrets v1', 32));
  }

  seal(secret: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), sealed]);
  }

  /** The secret, or undefined when it was sealed with another key (the key changed). */
  open(box: Buffer): string | undefined {
    if (box[0] !== VERSION || box.length < 29) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, box.subarray(1, 13));
      decipher.setAuthTag(box.subarray(13, 29));
      return Buffer.concat([decipher.update(box.subarray(29)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
