import type { Feature } from './feature.js';
import { registryFeature } from './registry/feature.js';
import { keyRoutes } from './keys/routes.js';
import { keyScopes } from './keys/commands.js';
import { sessionRoutes } from './session/routes.js';
import { healthRoutes } from './health/routes.js';
import { recordsFeature } from './records/feature.js';
import { climateFeature } from './climate/feature.js';
import { scoringFeature } from './walks/feature.js';
import { schedulesFeature } from './schedules/feature.js';
import { backupFeature } from './backup/feature.js';
import { scalesFeature } from './scales/feature.js';
import { weeksFeature } from './weeks/feature.js';
import { forecastFeature } from './forecast/feature.js';
import { syncFeature } from './sync/feature.js';

/**
 * Every feature the service runs. A new feature adds its line here: its routes
 * join the router and the OpenAPI document, its record kinds join the
 * registry's contents and cascades.
 */
export const FEATURES: Feature[] = [
  { name: 'health', routes: healthRoutes },
  { name: 'session', routes: sessionRoutes },
  { name: 'keys', routes: keyRoutes, scopes: keyScopes },
  registryFeature,
  recordsFeature,
  climateFeature,
  scoringFeature,
  schedulesFeature,
  backupFeature,
  scalesFeature,
  weeksFeature,
  forecastFeature,
  syncFeature,
];
