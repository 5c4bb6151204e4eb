import t from 'tap';
import { saturationVapourPressure, summariseClimate } from '../../src/weeks/climate.js';
import type { HourlySeries } from '../../src/climate/readings/hourly.js';

const H = 3_600_000;
const start = Date.parse('2026-06-01T00:00:00Z');
const series = (values: (number | null)[]): HourlySeries => {
  const s: HourlySeries = { at: [], values: [] };
  values.forEach((v, i) => {
    if (v !== null) {
      s.at.push(start + i * H);
      s.values.push(v);
    }
  });
  return s;
};
const utcHour = (ms: number) => new Date(ms).getUTCHours();

t.test('day and night by measured light, with the hours each figure rests on', async (t) => {
  // 24 hours: light from 06:00 to 19:59 UTC; 24 °C by day, 18 °C by night.
  const light = Array.from({ length: 24 }, (_, h) => (h >= 6 && h < 20 ? 300 : 0));
  const air = Array.from({ length: 24 }, (_, h) => (h >= 6 && h < 20 ? 24 : 18));
  const s = summariseClimate(
    new Map([
      ['global_radiation', series(light)],
      ['air_temperature', series(air)],
      ['relative_humidity', series(Array(24).fill(80))],
      ['co2', series(Array.from({ length: 24 }, (_, h) => (h >= 6 && h < 20 ? 800 : 400)))],
    ]),
    { latitude: null, longitude: null, localHour: utcHour },
  );
  t.equal(s.day_basis, 'global_radiation');
  t.same(s.air_temperature, { mean_24h_c: 21.5, mean_day_c: 24, mean_night_c: 18, hours: 24, day_hours: 14, night_hours: 10 });
  t.same(s.co2_day, { mean_ppm: 800, hours: 14 }, 'CO₂ by day only');
  t.same(s.radiation_sum, { j_cm2: 14 * 300 * 0.36, hours: 24, basis: 'global_radiation' }, '1 W/m² for an hour is 0.36 J/cm²');
  t.same(s.light_integral, { mol_m2: null, hours: 0 }, 'no PAR stored: no light integral');
  const vpd = saturationVapourPressure(24) * 0.2 * (14 / 24) + saturationVapourPressure(18) * 0.2 * (10 / 24);
  t.equal(s.vpd.basis, 'air_temperature_and_relative_humidity');
  t.equal(s.vpd.mean_kpa, Math.round(vpd * 1000) / 1000);
  t.equal(s.hours, 24);
});

t.test('stored sums, PAR and VPD are taken as stored', async (t) => {
  const s = summariseClimate(
    new Map([
      ['radiation_sum', series([100, 200, null, 50])],
      ['par', series([0, 1000, 1000, 0])],
      ['vpd', series([0.5, 0.7])],
    ]),
    { latitude: null, longitude: null, localHour: utcHour },
  );
  t.same(s.radiation_sum, { j_cm2: 350, hours: 3, basis: 'radiation_sum' });
  t.same(s.light_integral, { mol_m2: 7.2, hours: 4 }, '2 hours of 1000 µmol/m²/s = 7.2 mol/m²');
  t.same(s.vpd, { mean_kpa: 0.6, hours: 2, basis: 'vpd' });
  t.equal(s.air_temperature.mean_24h_c, null);
  t.equal(s.air_temperature.hours, 0);
});

t.test('without light readings: the sun at the greenhouse, else the clock', async (t) => {
  const air = series(Array.from({ length: 24 }, (_, h) => h));
  // Amsterdam on 1 June: the sun is up at the middle of the hours 04 to 19 UTC.
  const sun = summariseClimate(new Map([['air_temperature', air]]), { latitude: 52.37, longitude: 4.9, localHour: utcHour });
  t.equal(sun.day_basis, 'sun_position');
  t.equal(sun.air_temperature.day_hours, 16);
  const clock = summariseClimate(new Map([['air_temperature', air]]), { latitude: null, longitude: null, localHour: utcHour });
  t.equal(clock.day_basis, 'clock_06_18');
  t.equal(clock.air_temperature.day_hours, 12);
  t.equal(clock.air_temperature.mean_day_c, 11.5, 'hours 6 to 17');
  const outdoor = summariseClimate(new Map([['air_temperature', air]]), {
    latitude: null,
    longitude: null,
    localHour: utcHour,
    outdoorRadiation: new Map(Array.from({ length: 24 }, (_, h) => [start + h * H, h >= 8 && h < 16 ? 200 : 0])),
  });
  t.equal(outdoor.day_basis, 'outdoor_radiation');
  t.equal(outdoor.air_temperature.day_hours, 8);
});
