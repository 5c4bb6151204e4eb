import type { Feature } from '../feature.js';
import { readingRoutes } from './readings/routes.js';
import { importRoutes } from './imports/routes.js';

/**
 * Climate: typed readings, imports of climate-computer exports (preview,
 * upload, ingest, history, undo) and the watched export folder.
 */
export const climateFeature: Feature = {
  name: 'climate',
  routes: [...readingRoutes, ...importRoutes],
  recordKinds: [
    // Effects point at readings and imports: removed first (see dependsOn).
    { name: 'climate_import_effects', table: 'climate_import_effects', scope: 'cycle', column: 'cycle_id', dependsOn: ['climate_readings', 'climate_imports'] },
    { name: 'climate_readings', table: 'climate_readings', scope: 'cycle', column: 'cycle_id' },
    { name: 'climate_imports', table: 'climate_imports', scope: 'cycle', column: 'cycle_id' },
    { name: 'climate_file_mappings', table: 'climate_file_mappings', scope: 'greenhouse', column: 'greenhouse_id' },
  ],
};
