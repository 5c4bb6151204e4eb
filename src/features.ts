import type { Feature } from './feature.js';
import { registryRoutes } from './registry/routes.js';
import { keyRoutes } from './keys/routes.js';
import { sessionRoutes } from './session/routes.js';
import { healthRoutes } from './health/routes.js';
import { recordsFeature } from './records/feature.js';
import { climateFeature } from './climate/feature.js';
import { scoringFeature } from './walks/feature.js';

/**
 * Every feature the service runs. A new feature adds its line here: its routes
 * join the router and the OpenAPI document, its record kinds join the
 * registry's contents and cascades.
 */
export const FEATURES: Feature[] = [
  { name: 'health', routes: healthRoutes },
  { name: 'session', routes: sessionRoutes },
  { name: 'keys', routes: keyRoutes },
  { name: 'registry', routes: registryRoutes },
  recordsFeature,
  climateFeature,
  scoringFeature,
];
