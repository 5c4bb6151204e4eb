import type { Feature } from '../feature.js';
import type { HealthCheck, Services } from '../services.js';
import { parseFraming } from './connection.js';
import { scaleRoutes } from './routes.js';
import { ScaleService, scaleServices, type ScaleSettings } from './service.js';

/** The scale settings from the configuration; throws with the setting's name on a bad one. */
export function scaleSettings(config: Services['config']): ScaleSettings | null {
  const ports = (config.scalePort ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (!ports.length) return null;
  const framing = parseFraming(config.scaleFraming);
  if (!framing)
    throw new Error(`setting SCALE_FRAMING must be data bits, parity and stop bits, like 8N1 or 7E1; got ${config.scaleFraming}`);
  if (!Number.isInteger(config.scaleBaud) || config.scaleBaud < 50)
    throw new Error(`setting SCALE_BAUD must be a baud rate (9600), got ${config.scaleBaud}`);
  if (!Number.isInteger(config.scalePlainRepeats) || config.scalePlainRepeats < 1)
    throw new Error(`setting SCALE_PLAIN_REPEATS must be a whole number from 1, got ${config.scalePlainRepeats}`);
  return {
    ports,
    baudRate: config.scaleBaud,
    ...framing,
    zeroKg: config.scaleZeroKg,
    plainRepeats: config.scalePlainRepeats,
    defaultCycleId: config.scaleCycleId,
    reconnectMinMs: Math.max(10, config.scaleReconnectMinMs),
    reconnectMaxMs: Math.max(config.scaleReconnectMinMs, config.scaleReconnectMaxMs),
  };
}

/** Not ok while a scale is away or its weights cannot be recorded; the warning says what to do. */
function scalesCheck(scales: ScaleService): HealthCheck {
  return {
    name: 'scales',
    critical: false,
    async check() {
      const all = await scales.statuses();
      const warnings = all.map((s) => s.warning).filter((w): w is string => w !== null);
      return {
        ok: warnings.length === 0,
        detail: {
          scales: all.map((s) => ({
            port: s.port,
            connection: s.connection,
            state: s.state,
            cycle_id: s.cycle_id,
            last_reading: s.last_reading,
          })),
          warning: warnings.length ? warnings.join(' ') : null,
        },
      };
    },
  };
}

/** Scales on serial ports (SCALE_PORT): each stable weight after zero is a harvest. */
export const scalesFeature: Feature = {
  name: 'scales',
  routes: scaleRoutes,
  start(services) {
    const settings = scaleSettings(services.config);
    if (!settings) return;
    const scales = new ScaleService({ db: services.db, store: services.store, log: services.log, clock: services.clock }, settings);
    scaleServices.set(services, scales);
    services.healthChecks.push(scalesCheck(scales));
    services.onClose.push(() => scales.stop());
    scales.start();
  },
};
