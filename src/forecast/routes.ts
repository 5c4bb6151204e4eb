import { defineRoute, type RouteSpec } from '../http/route.js';
import { MAX_LIMIT, pageOf, pathParams } from '../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../registry/paths.js';
import type { CyclePath } from '../registry/scope.js';
import { requireWeek } from '../time/weeks.js';
import { backtestOf, checkForecastWeek, defaultForecastWeek, forecastAsOf, presentForecast } from './forecast.js';
import { listStoredForecasts, storedForecastOf, storeForecast } from './commands.js';
import { csvText, exportFileName, exportRows, type Delimiter } from './export.js';
import { backtestSchema, exportQuery, forecastQuery, forecastSchema, storedForecastSchema, storedForecastsQuery } from './schemas.js';

const TAG = 'Forecasts';
const params = pathParams(...CYCLE_PARAMS);

export const forecastRoutes: RouteSpec[] = [
  defineRoute<CyclePath, { week?: string }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/forecast`,
    operationId: 'get_forecast',
    summary: 'Forecast of kilos harvested in a week and the seven after it',
    description:
      "Made as of the week (default: the latest week with a scored walk; without walks, the current week) from what was known when it began: records dated before its Monday plus the walks and truss counts saved to it; never a harvest of the week or later. Per week: kg and kg/m² (of the cycle's area; null with the reason without one), a p10–p90 range from past errors at that horizon, the method (the model, or a naive baseline when the cycle's own rolling backtest says the model does worse there, with why), and the inputs it rests on. The model: truss cohorts moved by a temperature-driven development time, the walk's counts by ripeness, times fruit mass, gathered on the learned pick days, calibrated on recent harvests (docs/forecast.md). 422 for a week before the cycle, after its end, or not begun.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params,
    query: forecastQuery,
    responses: { 200: { description: 'The forecast, eight weeks.', schema: forecastSchema } },
    errors: [404],
    handler: async ({ db, scope, query, services }) => {
      const now = services.clock.now();
      const week = query.week ? requireWeek(query.week, 'week', 'query') : await defaultForecastWeek(db, scope, now);
      checkForecastWeek(scope, week, now);
      return presentForecast(scope, await forecastAsOf(db, scope, week, now));
    },
  }),
  defineRoute<CyclePath, { week?: string }, unknown, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/forecasts`,
    operationId: 'store_forecast',
    summary: 'Issue the forecast and store it, unchanged for ever',
    description:
      'Issues the forecast as GET forecast does for the week (same default) and stores it: the week, each forecast week with its horizon, kg, kg/m², p10–p90 and method, the inputs it rested on, when and by whom. A stored forecast is never changed; storing again for the same week keeps both. It goes only with its crop cycle (cascade).',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params,
    query: forecastQuery,
    responses: { 201: { description: 'The stored forecast, with the harvest realized so far.', schema: storedForecastSchema } },
    errors: [404],
    handler: async ({ w, scope, query, services }) => {
      const now = services.clock.now();
      const row = await storeForecast(w, scope, query.week ? requireWeek(query.week, 'week', 'query') : undefined, now);
      return storedForecastOf(w.trx, scope, row, now);
    },
  }),
  defineRoute<CyclePath, { limit: number; offset: number; week?: string }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/forecasts`,
    operationId: 'list_stored_forecasts',
    summary: 'Stored forecasts, newest first, with the harvest since',
    description: `Each stored forecast as issued, and for each of its weeks the kilos harvested since (as stored now: an edited harvest shows) and, once the week is complete, the error. Paged: \`limit\` (default 50, at most ${MAX_LIMIT}), \`offset\`; \`week\` keeps the forecasts made as of that week.`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params,
    query: storedForecastsQuery,
    responses: { 200: { description: 'Stored forecasts, newest first.', schema: pageOf(storedForecastSchema) } },
    errors: [404],
    handler: async ({ db, scope, query, services }) =>
      listStoredForecasts(
        db,
        scope,
        { limit: query.limit, offset: query.offset, week: query.week ? requireWeek(query.week, 'week', 'query') : undefined },
        services.clock.now(),
      ),
  }),
  defineRoute<CyclePath, unknown, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/backtest`,
    operationId: 'get_backtest',
    summary: 'The forecast replayed on the cycle’s past, its errors per horizon against two naive baselines',
    description:
      'Replays the forecast as of every week of the cycle up to the current one (or its last), each with only what was known when that week began, and answers per horizon 0 to 7 (0 is the week the forecast is made for) over every complete week: n, actual kg, MAE (kg), WAPE (sum of |error| ÷ sum of actual) and bias (kg), and the same for the naive baselines persistence (the last complete week’s harvest) and mean_3_weeks (the mean of the last three) on the same weeks; and each replayed week with its forecasts and the actuals. Harvests are read as stored now: an edited or deleted harvest changes the next backtest.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params,
    responses: { 200: { description: 'The backtest.', schema: backtestSchema } },
    errors: [404],
    handler: async ({ db, scope, services }) => backtestOf(db, scope, services.clock.now()),
  }),
  defineRoute<CyclePath, { delimiter: Delimiter }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/export.csv`,
    operationId: 'export_cycle_csv',
    summary: 'The cycle week by week as CSV, for a spreadsheet',
    description:
      'One row per ISO week from the cycle’s start to its end (or the current week), after a header row: week label; walk counts by the detector and corrected (green, turning, red, total; summed over the week’s scored walks); harvest kg and kg/m²; irrigation water and drain (L); water productivity (kg per m³ given); mean air temperature (°C, all hours); radiation sum (J/cm²; stored sums, else from global radiation); the forecast made for the week at horizon 0 and 3 when one was stored (kg); the week note’s text. UTF-8 with a byte-order mark; a cell that would start a formula (=, +, -, @, tab, carriage return) is prefixed with an apostrophe. `delimiter=semicolon` gives `;` and decimal commas. Content-Disposition names the cycle and the date.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params,
    query: exportQuery,
    responses: {
      200: {
        description: 'The CSV file.',
        contentType: 'text/csv',
        headers: {
          'Content-Disposition': { description: 'attachment; the file name says the cycle and the date.', schema: { type: 'string' } },
        },
      },
    },
    errors: [404],
    handler: async ({ db, scope, query, services, reply }) => {
      const now = services.clock.now();
      const name = exportFileName(scope, now);
      reply.headers['Content-Type'] = 'text/csv; charset=utf-8';
      reply.headers['Content-Disposition'] = `attachment; filename="${name.ascii}"; filename*=UTF-8''${encodeURIComponent(name.utf8)}`;
      return csvText(await exportRows(db, scope, now), query.delimiter);
    },
  }),
];
