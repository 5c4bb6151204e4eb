/**
 * Writes one year of 5-minute climate readings (about 105,000 rows, 30 value columns) as a
 * Priva-style export: ';' separated, decimal commas, separate Datum and Tijd columns in
 * Europe/Amsterdam wall-clock time (so the autumn hour repeats and the spring hour is
 * missing), units in brackets. Streams to disk; memory stays flat. `years` writes that many
 * consecutive years into one file (three years: about 315,000 rows, 44 MiB).
 *
 *   node --import tsx scripts/gen-climate-year.ts <out.csv> [year] [minutesPerRow] [years]
 */
import { createWriteStream } from 'node:fs';
import { DateTime } from 'luxon';
import { fileURLToPath } from 'node:url';

/** Header and a deterministic value per column, by hour of day (h) and day of year (d). */
const COLUMNS: [string, (h: number, d: number, i: number) => number][] = [
  ['Kas 1 Temperatuur (°C)', (h) => 18 + 4 * Math.sin(((h - 8) / 24) * 2 * Math.PI)],
  ['Kas 1 RV (%)', (h) => 80 - 10 * Math.sin(((h - 8) / 24) * 2 * Math.PI)],
  ['Kas 1 CO2 (ppm)', (h) => (h > 6 && h < 18 ? 800 : 450)],
  ['Kas 1 Raamstand lijzijde (%)', (h) => Math.max(0, 30 * Math.sin(((h - 6) / 12) * Math.PI))],
  ['Kas 1 Raamstand windzijde (%)', (h) => Math.max(0, 15 * Math.sin(((h - 6) / 12) * Math.PI))],
  ['Kas 1 Buistemp. (°C)', (h) => 40 + 10 * Math.cos((h / 24) * 2 * Math.PI)],
  ['Kas 1 Verw.temp. sp (°C)', (h) => (h > 6 && h < 20 ? 19 : 17)],
  ['Kas 1 Vent.temp. sp (°C)', (h) => (h > 6 && h < 20 ? 22 : 20)],
  ['Kas 1 CO2 sp (ppm)', (h) => (h > 6 && h < 18 ? 800 : 400)],
  ['Kas 1 Schermdoek (%)', (h) => (h < 6 || h > 20 ? 100 : 0)],
  ['Kas 1 Vochtdeficit (g/m³)', (h) => 3 + 2 * Math.sin((h / 24) * 2 * Math.PI)],
  ['Kas 1 VPD (kPa)', (h) => 0.6 + 0.3 * Math.sin((h / 24) * 2 * Math.PI)],
  ['Kas 1 Dauwpunt (°C)', () => 14],
  ['Kas 1 Absoluut vocht (g/m3)', () => 12],
  ['Kas 1 PAR (µmol/m²/s)', (h) => Math.max(0, 900 * Math.sin(((h - 6) / 12) * Math.PI))],
  ['Kas 1 Bladtemperatuur (°C)', (h) => 19 + 3 * Math.sin(((h - 8) / 24) * 2 * Math.PI)],
  ['Kas 1 Mattemperatuur (°C)', () => 20],
  ['Kas 1 EC mat (mS/cm)', (_h, d) => 3 + (d % 10) / 10],
  ['Kas 1 Watergehalte mat (%)', (h) => 65 + 5 * Math.cos((h / 24) * 2 * Math.PI)],
  ['Kas 1 CO2 dosering (kg/ha)', (h) => (h > 6 && h < 18 ? 2.5 : 0)],
  ['Buitentemperatuur (°C)', (h, d) => 10 - 8 * Math.cos((d / 365) * 2 * Math.PI) + 4 * Math.sin(((h - 9) / 24) * 2 * Math.PI)],
  ['Buiten RV (%)', (h) => 85 - 15 * Math.sin(((h - 8) / 24) * 2 * Math.PI)],
  ['Globale straling (W/m2)', (h, d) => Math.max(0, (500 - 300 * Math.cos((d / 365) * 2 * Math.PI)) * Math.sin(((h - 6) / 12) * Math.PI))],
  ['Stralingssom (J/cm2)', (h) => Math.max(0, 10 * Math.sin(((h - 6) / 12) * Math.PI))],
  ['Windsnelheid (m/s)', (_h, _d, i) => 3 + (i % 7) / 2],
  ['Windrichting (°)', (_h, _d, i) => (i * 7) % 360],
  ['Neerslag (mm)', (_h, _d, i) => (i % 97 === 0 ? 0.2 : 0)],
  ['Luchtdruk (hPa)', (_h, d) => 1013 + 10 * Math.sin(d / 9)],
  ['Kas 1 Bovenbuis (°C)', (h) => 35 + 5 * Math.cos((h / 24) * 2 * Math.PI)],
  ['Kas 1 RV sp (%)', () => 85],
];

const comma = (v: number) => (Math.round(v * 100) / 100).toString().replace('.', ',');

export async function generateClimateYear(file: string, year = 2021, minutes = 5, zone = 'Europe/Amsterdam', years = 1): Promise<number> {
  const out = createWriteStream(file);
  const write = async (s: string) => {
    if (!out.write(s)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  await write('Datum;Tijd;' + COLUMNS.map((c) => c[0]).join(';') + '\r\n');
  let t = DateTime.fromObject({ year, month: 1, day: 1 }, { zone }).toMillis();
  const end = DateTime.fromObject({ year: year + years, month: 1, day: 1 }, { zone }).toMillis();
  let rows = 0;
  let buf = '';
  for (let i = 0; t < end; i++, t += minutes * 60_000) {
    const local = DateTime.fromMillis(t, { zone });
    const h = local.hour + local.minute / 60;
    const d = local.ordinal;
    buf += `${local.toFormat('dd-MM-yyyy')};${local.toFormat('HH:mm')};${COLUMNS.map((c) => comma(c[1](h, d, i))).join(';')}\r\n`;
    rows++;
    if (buf.length > 1 << 16) {
      await write(buf);
      buf = '';
    }
  }
  await write(buf);
  await new Promise<void>((r) => out.end(() => r()));
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: gen-climate-year.ts <out.csv> [year] [minutesPerRow] [years]');
    process.exit(2);
  }
  const rows = await generateClimateYear(
    file,
    Number(process.argv[3] ?? 2021),
    Number(process.argv[4] ?? 5),
    'Europe/Amsterdam',
    Number(process.argv[5] ?? 1),
  );
  console.log(`${rows} rows, ${COLUMNS.length} value columns → ${file}`);
}
