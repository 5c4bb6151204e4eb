// Child process of bench/registry.ts: serves the real app (over a registry of
// 10 farms x 10 greenhouses x 20 rows x 2 cycles) and a bare Koa handler, so
// the load generator in the parent does not share their event loop.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { createApp } from '../src/app.js';
import { createLogger } from '../src/log.js';
import { createOrganization } from '../src/keys/commands.js';
import { createLevel } from '../src/registry/commands.js';
import { LEVELS } from '../src/registry/levels.js';
import { SYSTEM_ACTOR } from '../src/db/store.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bench-'));
// The real request logging runs (JSON per request); only the write is dropped.
const app = await createApp({
  config: { dataDir, adminToken: 'bench', authFailuresPerMinute: 0 },
  env: {},
  logger: createLogger((process.env.BENCH_LOG as any) ?? 'info', {}, () => undefined),
  startBackground: false,
});
const { org, key } = await app.services.store.write(SYSTEM_ACTOR, (w) => createOrganization(w, 'Bench Growers', 'bench'));
let nodes = 0;
await app.services.store.write(SYSTEM_ACTOR, async (w) => {
  const base = { organization_id: org.id };
  for (let f = 0; f < 10; f++) {
    const farm = await createLevel(w, LEVELS.farm, base, { name: `Farm ${f}` });
    nodes++;
    for (let g = 0; g < 10; g++) {
      const gh = await createLevel(
        w,
        LEVELS.greenhouse,
        { ...base, farm_id: farm.id },
        { name: `GH ${f}.${g}`, time_zone: 'Europe/Amsterdam', latitude: 52, longitude: 4.3, area_m2: 10000 },
      );
      nodes++;
      for (let r = 0; r < 20; r++) {
        const row = await createLevel(
          w,
          LEVELS.row,
          { ...base, farm_id: farm.id, greenhouse_id: gh.id },
          { name: `Row ${r}`, length_m: 100, plant_count: 250 },
        );
        nodes++;
        for (let c = 0; c < 2; c++) {
          await createLevel(
            w,
            LEVELS.cycle,
            { ...base, farm_id: farm.id, greenhouse_id: gh.id, row_id: row.id },
            {
              name: `Cycle ${c}`,
              started_on: `202${5 + c}-01-05`,
              crop: 'tomato',
              variety: 'Merlice',
              plants_per_m2: 2.5,
              stems_per_m2: 3.3,
            },
          );
          nodes++;
        }
      }
    }
  }
});
const server = await app.listen(0, '127.0.0.1');

const bare = new Koa();
bare.use((ctx) => {
  ctx.body = { ok: true };
});
const bareServer = bare.listen(0, '127.0.0.1');
await new Promise((r) => bareServer.once('listening', r));

process.send!({
  app: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  bare: `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`,
  orgId: org.id,
  apiKey: key.apiKey,
  nodes,
});
process.on('message', async (m) => {
  if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send!({ cpuUs: u.user + u.system });
  } else if (m === 'stop') {
    bareServer.close();
    await app.close();
    process.exit(0);
  }
});
