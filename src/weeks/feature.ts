import type { Feature } from '../feature.js';
import { weekRoutes } from './routes.js';

/** The week read: gathers from records, climate, weather, walks and forecasts; it stores nothing of its own. */
export const weeksFeature: Feature = { name: 'weeks', routes: weekRoutes };
