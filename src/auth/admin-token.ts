import { existsSync, readFileSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { hashSecret } from './keys.js';
import type { Logger } from '../log.js';

export interface AdminToken {
  /** SHA-256 of the token; the token itself is not kept in memory longer than start-up. */
  hash: string;
  source: 'env' | 'file';
  file?: string;
}

/**
 * The appliance admin token: ADMIN_TOKEN when set; otherwise generated once and
 * written to DATA_DIR/admin-token (mode 0600). The log names the file, never the token.
 */
export function loadAdminToken(configured: string | undefined, dataDir: string, log: Logger): AdminToken {
  if (configured) return { hash: hashSecret(configured), source: 'env' };
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'admin-token');
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
    log.info('generated the appliance admin token', { file });
  } else {
    chmodSync(file, 0o600);
    log.info('appliance admin token read from file', { file });
  }
  const token = readFileSync(file, 'utf8').trim();
  return { hash: hashSecret(token), source: 'file', file };
}
