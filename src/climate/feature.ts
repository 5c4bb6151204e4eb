import type { Feature } from '../feature.js';
import { readingRoutes } from './readings/routes.js';
import { importRoutes } from './imports/routes.js';
import { countPointsOf, removePointsOf } from './readings/points.js';
import { mkdirSync } from 'node:fs';
import { startClimateWatcher } from './watch/watcher.js';
import { weatherRoutes } from './weather/routes.js';
import { countWeatherOf, removeWeatherOf } from './weather/commands.js';
import { weatherSchedule } from './weather/schedule.js';

/**
 * Climate: typed readings, imports of climate-computer exports (preview,
 * upload, ingest, history, undo), the watched export folder, and the
 * greenhouse's outdoor weather from a weather service.
 */
export const climateFeature: Feature = {
  name: 'climate',
  routes: [...readingRoutes, ...importRoutes, ...weatherRoutes],
  schedules: [weatherSchedule],
  recordKinds: [
    // Readings name their imports (and their undo records hang off them): removed first (see dependsOn).
    {
      name: 'climate_readings',
      table: 'climate_points',
      scope: 'cycle',
      column: 'cycle_id',
      dependsOn: ['climate_imports'],
      count: countPointsOf,
      remove: removePointsOf,
    },
    { name: 'climate_imports', table: 'climate_imports', scope: 'cycle', column: 'cycle_id' },
    { name: 'climate_file_mappings', table: 'climate_file_mappings', scope: 'greenhouse', column: 'greenhouse_id' },
    // Hours name the refresh that last set them: removed first. One change-log entry per greenhouse for its hours.
    {
      name: 'weather_hours',
      table: 'weather_hours',
      scope: 'greenhouse',
      column: 'greenhouse_id',
      dependsOn: ['weather_refreshes'],
      count: countWeatherOf,
      remove: removeWeatherOf,
    },
    { name: 'weather_refreshes', table: 'weather_refreshes', scope: 'greenhouse', column: 'greenhouse_id' },
  ],
  start(services) {
    const dir = services.config.climateWatchDir;
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    const { db, store, clock } = services;
    const watcher = startClimateWatcher({
      dir,
      deps: { db, store, clock },
      log: services.log,
      limitBytes: services.config.climateUploadLimit,
    });
    services.onClose.push(() => watcher.close());
    // Not critical: the API works without the folder; /api/health shows what it has done.
    services.healthChecks.push({
      name: 'climate_watch',
      critical: false,
      check: async () => ({ ok: true, detail: { ...watcher.status() } }),
    });
  },
};
