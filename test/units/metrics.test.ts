import t from 'tap';
import { CLIMATE_METRICS, climateMetric, isClimateMetric, toCanonical } from '../../src/climate/metrics.js';
import { conversion } from '../../src/units/units.js';

t.test('the vocabulary holds the required metrics with canonical units', async (t) => {
  const want: Record<string, string> = {
    air_temperature: '°C',
    relative_humidity: '%',
    co2: 'ppm',
    global_radiation: 'W/m²',
    par: 'µmol/m²/s',
    vpd: 'kPa',
    pipe_temperature: '°C',
    vent_opening: '%',
    screen_position: '%',
    substrate_temperature: '°C',
    substrate_ec: 'mS/cm',
    substrate_water_content: '%',
    leaf_temperature: '°C',
    outside_temperature: '°C',
    humidity_deficit: 'g/m³',
    dew_point: '°C',
    absolute_humidity: 'g/m³',
    outside_relative_humidity: '%',
    wind_speed: 'm/s',
    wind_direction: '°',
    rain: 'mm',
    air_pressure: 'hPa',
    heating_setpoint: '°C',
    ventilation_setpoint: '°C',
    co2_setpoint: 'ppm',
    co2_dosing: 'kg/ha',
    radiation_sum: 'J/cm²',
  };
  for (const [name, unit] of Object.entries(want)) {
    t.ok(isClimateMetric(name), name);
    t.equal(climateMetric(name)?.unit, unit, `${name} in ${unit}`);
  }
  t.notOk(isClimateMetric('temperature'));
  t.notOk(isClimateMetric(42));
});

t.test('aggregation, setpoints and ranges', async (t) => {
  t.equal(climateMetric('air_temperature')!.aggregate, 'mean');
  t.equal(climateMetric('rain')!.aggregate, 'sum');
  t.equal(climateMetric('radiation_sum')!.aggregate, 'sum');
  t.equal(climateMetric('co2_dosing')!.aggregate, 'sum');
  t.equal(climateMetric('wind_direction')!.aggregate, 'circular_mean');
  for (const m of CLIMATE_METRICS) {
    t.equal(m.setpoint, m.name.endsWith('_setpoint'), `${m.name}: setpoints are named *_setpoint`);
    t.ok(m.range[0] < m.range[1], `${m.name} range`);
    t.ok(conversion(m.unit, m.unit), `${m.name}: canonical unit ${m.unit} is known`);
    t.ok(m.description.length > 10);
  }
});

t.test('toCanonical converts and reports the conversion', async (t) => {
  t.same(toCanonical('air_temperature', 21.5), { ok: true, value: 21.5, conversion: null });
  t.same(toCanonical('air_temperature', 21.5, '°C'), { ok: true, value: 21.5, conversion: null });
  const f = toCanonical('air_temperature', 68, '°F');
  t.equal(f.ok, true);
  if (f.ok) {
    t.ok(Math.abs(f.value - 20) < 1e-9);
    t.equal(f.conversion, '°F → °C');
  }
  t.same(toCanonical('vpd', 10, 'hPa'), { ok: true, value: 1, conversion: 'hPa → kPa' });
  t.same(toCanonical('substrate_ec', 2500, 'uS/cm'), { ok: true, value: 2.5, conversion: 'µS/cm → mS/cm' });
  t.same(toCanonical('co2', 800, 'vpm'), { ok: true, value: 800, conversion: 'vpm → ppm' });
  const par = toCanonical('par', 10.8, 'klux');
  t.equal(par.ok, true);
  if (par.ok) t.match(par.conversion, /sunlight approximation/);
});

t.test('toCanonical refuses with a message fit for a 422', async (t) => {
  const cases: [string, number, string | undefined, RegExp][] = [
    ['temperature', 20, undefined, /unknown metric 'temperature'.*air_temperature/],
    ['air_temperature', 20, 'furlongs', /unknown unit 'furlongs'/],
    ['air_temperature', 20, '%', /cannot be converted to °C/],
    ['vpd', 10, 'g/m3', /cannot be converted to kPa/],
    ['co2', 5.47e34, undefined, /outside the plausible range/],
    ['relative_humidity', 101, undefined, /outside the plausible range 0 to 100 %/],
    ['air_temperature', -9999, undefined, /outside the plausible range/],
    ['air_temperature', Number.NaN, undefined, /finite number/],
    ['air_temperature', Number.POSITIVE_INFINITY, undefined, /finite number/],
  ];
  for (const [metric, value, unit, re] of cases) {
    const r = toCanonical(metric, value, unit);
    t.equal(r.ok, false, `${metric} ${value} ${unit ?? ''} refused`);
    if (!r.ok) t.match(r.message, re);
  }
  t.equal(toCanonical('vpd', 10).ok, true, 'the range bound itself is accepted');
  t.equal(toCanonical('vpd', 10.01).ok, false, 'just past the bound is refused');
});
