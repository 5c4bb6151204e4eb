import type { Feature } from '../feature.js';
import { registryRoutes } from './routes.js';
import { registryScopes } from './scope.js';

/** The registry: organization > farm > greenhouse > row > crop cycle, and the scopes every feature's paths resolve through. */
export const registryFeature: Feature = { name: 'registry', routes: registryRoutes, scopes: registryScopes };
