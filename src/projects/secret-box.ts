import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DocwrightError } from '../errors.ts';

/**
 * Encrypts project secrets at rest with AES-256-GCM. The key is SHA-256 of
 * `DOCWRIGHT_SECRET_KEY`, so any sufficiently long string works as a key.
 * Stored form: `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(secret: string) {
    this.#key = createHash('sha256').update(secret).digest();
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data]
      .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
      .join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) {
      throw new DocwrightError('internal-error', 'stored secret has an unknown format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    } catch (cause) {
      throw new DocwrightError(
        'internal-error',
        'cannot decrypt project secrets: DOCWRIGHT_SECRET_KEY differs from the key they were saved with',
        { cause },
      );
    }
  }
}

/**
 * The secret key: `DOCWRIGHT_SECRET_KEY` when set; otherwise, for the embedded
 * default only, a key generated once into `<dataDir>/secret.key` (mode 0600).
 * A PostgreSQL deployment must set the variable, since every process has to
 * share one key and no process may keep state the others need.
 */
export function resolveSecretKey(options: {
  secretKey: string | undefined;
  databaseUrl: string | undefined;
  dataDir: string;
}): string | undefined {
  if (options.secretKey) return options.secretKey;
  if (options.databaseUrl) return undefined;
  const file = path.join(options.dataDir, 'secret.key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return key;
}
