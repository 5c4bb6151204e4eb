import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const fixtures = path.join(repoRoot, 'test/fixtures/climate');
export const fixture = (name: string) => ({ path: path.join(fixtures, name) });
