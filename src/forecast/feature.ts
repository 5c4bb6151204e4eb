import type { Feature } from '../feature.js';
import { forecastRoutes } from './routes.js';
import { forecastSchedule } from './schedule.js';
import './tables.js';

/** Forecasts of kilos, stored forecasts, the backtest and the CSV export (docs/forecast.md). */
export const forecastFeature: Feature = {
  name: 'forecast',
  routes: forecastRoutes,
  recordKinds: [{ name: 'forecasts', table: 'forecasts', scope: 'cycle', column: 'cycle_id' }],
  schedules: [forecastSchedule],
};
