// Column names of climate exports in English, Dutch, German and Danish, and vendor short
// codes, mapped to metrics. Patterns run on text folded by foldHeader (lower case,
// accents removed except æ ø ß, punctuation as spaces).

export interface NameRule {
  re: RegExp;
  metric: string;
  confidence: number;
  reason: string;
}

export function foldHeader(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[_\-:;,.()[\]{}/\\|"'`*#=+]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const R = (re: RegExp, metric: string, confidence: number, reason: string): NameRule => ({ re, metric, confidence, reason });

// Vendor short codes (Argus, Hoogendoorn, Priva exports and the Wageningen
// Autonomous Greenhouse data sets use these channel names).
const VENDOR: NameRule[] = [
  R(/\btair\b/, 'air_temperature', 0.95, 'vendor code Tair'),
  R(/\brhair\b/, 'relative_humidity', 0.95, 'vendor code Rhair'),
  R(/\bco2air\b/, 'co2', 0.95, 'vendor code CO2air'),
  R(/\bhumdef\b/, 'humidity_deficit', 0.95, 'vendor code HumDef'),
  R(/\btot par\b|\btotpar\b|\bpar(?:in|lamps)?\b/, 'par', 0.9, 'PAR'),
  R(/\btpipe\b|\bpipelow\b|\bpipegrow\b|\bt pipe\b/, 'pipe_temperature', 0.95, 'vendor code for pipe temperature'),
  R(/\bventlee\b|\bventwind\b|\bvent lee\b|\bvent wind\b/, 'vent_opening', 0.95, 'vendor code for vent opening'),
  R(/\benscr\b|\bblackscr\b|\bshdscr\b/, 'screen_position', 0.95, 'vendor code for screen position'),
  R(/\biglob\b/, 'global_radiation', 0.95, 'vendor code Iglob'),
  R(/\btout\b/, 'outside_temperature', 0.95, 'vendor code Tout'),
  R(/\brhout\b/, 'outside_relative_humidity', 0.95, 'vendor code Rhout'),
  R(/\bwindsp\b/, 'wind_speed', 0.95, 'vendor code Windsp'),
  R(/\bwinddir\b/, 'wind_direction', 0.95, 'vendor code Winddir'),
  R(/\btleaf\b|\btcan\b/, 'leaf_temperature', 0.9, 'vendor code for leaf temperature'),
  R(/\btslab\b|\btsub\b|\btroot\b/, 'substrate_temperature', 0.9, 'vendor code for substrate temperature'),
  R(/\bec ?slab\b/, 'substrate_ec', 0.9, 'vendor code for slab EC'),
  R(/\bwc ?slab\b/, 'substrate_water_content', 0.9, 'vendor code for slab water content'),
  R(/\bco2 ?dos\b/, 'co2_dosing', 0.9, 'vendor code for CO₂ dosing'),
  R(/\bt ?heat ?sp\b/, 'heating_setpoint', 0.95, 'vendor code for the heating setpoint'),
  R(/\bt ?vent ?sp\b/, 'ventilation_setpoint', 0.95, 'vendor code for the ventilation setpoint'),
  R(/\bco2 ?sp\b/, 'co2_setpoint', 0.95, 'vendor code for the CO₂ setpoint'),
];

const NAMES: NameRule[] = [
  // air temperature
  R(/\bkas ?temp\w*|\bkaslucht ?temp\w*|\blucht ?temp\w*/, 'air_temperature', 0.95, 'Dutch name for greenhouse air temperature'),
  R(/\bluft ?temp\w*|\braum ?temp\w*|\binnen ?temp\w*/, 'air_temperature', 0.9, 'German/Danish name for air temperature'),
  R(/\bair ?temp\w*|\bgreenhouse ?temp\w*|\bindoor ?temp\w*|\binside ?temp\w*/, 'air_temperature', 0.9, 'English name for air temperature'),
  R(/\binde ?temp\w*|\bhus ?temp\w*/, 'air_temperature', 0.9, 'Danish name for inside temperature'),
  R(/\btemperatuur\b|\btemperature\b|\btemperatur\b|\btemp\b/, 'air_temperature', 0.5, 'a temperature without saying of what'),
  // humidity
  R(/\brv\b|\brel(?:atieve)? ?vocht\w*|\bluchtvocht\w*/, 'relative_humidity', 0.9, 'Dutch name for relative humidity'),
  R(/\brelative humidity\b|\brel ?hum\w*|\brh\b/, 'relative_humidity', 0.9, 'English name for relative humidity'),
  R(/\bluftfeucht\w*|\brel ?feuchte\b|\brelative feuchte\b/, 'relative_humidity', 0.9, 'German name for relative humidity'),
  R(/\bluftfugtighed\b|\brelativ fugtighed\b|\bfugtighed\b/, 'relative_humidity', 0.85, 'Danish name for relative humidity'),
  R(/\bhumidity\b|\bvochtigheid\b/, 'relative_humidity', 0.55, 'a humidity without saying which'),
  R(
    /\bvocht ?deficit\b|\bvocht ?tekort\b|\bvochtdeficit\b|\bhumidity deficit\b|\bfeuchte ?defizit\b|\bfugt ?underskud\b|\bfugtunderskud\b|\bhd\b|\bvd\b/,
    'humidity_deficit',
    0.95,
    'humidity deficit (g/m³)',
  ),
  R(
    /\bvpd\b|\bvapou?r pressure deficit\b|\bdampdruk ?deficit\b|\bdampfdruck ?defizit\b|\bdamptryk ?underskud\b/,
    'vpd',
    0.95,
    'vapour pressure deficit',
  ),
  R(
    /\babs(?:olute?)? hum\w*|\babsolu(?:u)?te? vocht\w*|\babsolute feuchte\b|\babsolut fugtighed\b|\bah\b/,
    'absolute_humidity',
    0.9,
    'absolute humidity',
  ),
  R(/\bdew ?point\b|\bdauwpunt\b|\btaupunkt\b|\bdugpunkt\b/, 'dew_point', 0.9, 'dew point'),
  // CO2
  R(/\bco2\b|\bkooldioxide\b|\bcarbon dioxide\b|\bkohlendioxid\b|\bkuldioxid\b/, 'co2', 0.9, 'CO₂'),
  R(/\bco2 ?dos\w*|\bco2 ?doseer\w*|\bco2 ?dosier\w*/, 'co2_dosing', 0.93, 'CO₂ dosing'),
  // light
  R(/\bglobal radiation\b|\bglobale? straling\b|\bglobalstrahlung\b|\bglobal ?straling\b/, 'global_radiation', 0.95, 'global radiation'),
  R(
    /\bstraling\b|\binstraling\b|\bsolar radiation\b|\bpyranometer\b|\bsolindstraling\b|\bindstraling\b|\bsolstraling\b|\bstrahlung\b|\bbuiten ?straling\b/,
    'global_radiation',
    0.88,
    'solar radiation',
  ),
  R(/\bradiation\b|\bsolar\b/, 'global_radiation', 0.55, 'a radiation without saying which'),
  R(
    /\bstralings ?som\b|\blichtsom\b|\bradiation sum\b|\bstrahlungssumme\b|\blyssum\b|\bstraling ?som\b|\bindstraling ?sum\b/,
    'radiation_sum',
    0.95,
    'radiation sum',
  ),
  R(/\bppfd\b|\bphotosynthetically\b|\bpar licht\b/, 'par', 0.9, 'PAR'),
  // A day's totals (plan.ts reads energy and radiation sums as daily only from daily rows).
  R(
    /\bdli\b|\bdaily light integral\b|\blicht ?integraal\b|\bdag ?licht ?som\b|\bdaglichtsom\b|\btageslichtintegral\b|\bdagligt lysintegral\b|\bpar ?som\b|\bpar ?sum\b/,
    'daily_light_integral',
    0.95,
    'daily light integral',
  ),
  R(
    /\bwarmte\b|\bwarmteverbruik\b|\bwarmte ?gebruik\b|\bheat\b|\bheat ?use\w*|\bheating energy\b|\bwarme\b|\bwarmeverbrauch\b|\bvarme\b|\bvarmeforbrug\b|\bstook ?energie\b/,
    'daily_heat_energy',
    0.85,
    'heat used',
  ),
  R(
    /\belektriciteit\w*|\belectricity\b|\bstroom ?verbruik\b|\bstromverbrauch\b|\bstrom\b|\bel ?forbrug\b|\belforbrug\b/,
    'daily_electricity',
    0.85,
    'electricity used',
  ),
  // pipes
  R(
    /\bbuis ?temp\w*|\bboven ?buis\b|\bonder ?buis\b|\btafel ?buis\b|\bgroei ?buis\b|\bbuis\b|\bbuisrail\b/,
    'pipe_temperature',
    0.9,
    'Dutch name for heating pipe',
  ),
  R(/\brohr ?temp\w*|\bheiz ?rohr\w*|\bvorlauf ?temp\w*|\bvorlauf\b/, 'pipe_temperature', 0.9, 'German name for heating pipe'),
  R(/\bpipe ?temp\w*|\bheating pipe\b|\bpipe\b|\bflow temp\w*/, 'pipe_temperature', 0.9, 'heating pipe / flow temperature'),
  R(/\brør ?temp\w*|\bfremløb\w*|\bfremlob\w*/, 'pipe_temperature', 0.9, 'Danish name for heating pipe'),
  // vents and screens
  R(
    /\braam ?stand\w*|\braam\b|\bluchting\b|\bluchtraam\w*|\blij ?zijde\b|\bluwe ?zijde\b|\bwind ?zijde\b/,
    'vent_opening',
    0.9,
    'Dutch name for vent opening',
  ),
  R(/\bvent ?position\b|\bvent ?opening\b|\bvent ?pos\b|\bwindow\w*|\bvents?\b/, 'vent_opening', 0.85, 'vent opening'),
  R(/\bluftung\w*|\bfenster\w*|\bvindue\w*|\blem ?position\b/, 'vent_opening', 0.85, 'German/Danish name for vent opening'),
  R(/(?:scherm|schirm|screen)\w*|\bdoek\b|\bgardin\w*|\bcurtain\w*/, 'screen_position', 0.9, 'screen'),
  // root zone and crop
  R(
    /\bsubstra(?:a)?t ?temp\w*|\bmat ?temp\w*|\bslab ?temp\w*|\bsubstrate ?temp\w*|\bwortel ?temp\w*|\broot ?temp\w*|\bsubstrat ?temp\w*/,
    'substrate_temperature',
    0.9,
    'substrate temperature',
  ),
  R(
    /\bec ?mat\b|\bmat ?ec\b|\bsubstra(?:a|te)?t? ?ec\b|\bec ?substra\w*|\becb\b|\becw\b|\bec\b/,
    'substrate_ec',
    0.7,
    'electrical conductivity (taken as substrate EC)',
  ),
  R(
    /\bvwc\b|\bwater ?content\b|\bwater ?gehalte\b|\bwassergehalt\b|\bvandindhold\b|\bwc\b/,
    'substrate_water_content',
    0.8,
    'substrate water content',
  ),
  R(
    /\bblad ?temp\w*|\bleaf ?temp\w*|\bblatt ?temp\w*|\bplant ?temp\w*|\bgewas ?temp\w*|\bcrop ?temp\w*|\bcanopy ?temp\w*/,
    'leaf_temperature',
    0.9,
    'leaf temperature',
  ),
  R(/\bsurface ?temp\w*/, 'leaf_temperature', 0.6, 'a surface temperature (taken as leaf temperature)'),
  // outside
  R(
    /\bbuiten ?temp\w*|\boutside ?temp\w*|\boutdoor ?temp\w*|\bau(?:ss|ß)en ?temp\w*|\bude ?temp\w*/,
    'outside_temperature',
    0.95,
    'outside temperature',
  ),
  R(
    /\bbuiten ?(?:rv|vocht\w*)|\boutside (?:rh|humidity)\b|\bau(?:ss|ß)en ?feuchte\b|\bude ?fugt\w*/,
    'outside_relative_humidity',
    0.95,
    'outside relative humidity',
  ),
  R(/\bwind ?speed\b|\bwind ?snelheid\b|\bwind ?geschwindigkeit\b|\bvind ?hastighed\b/, 'wind_speed', 0.95, 'wind speed'),
  R(/\bwind ?direction\b|\bwind ?richting\b|\bwind ?richtung\b|\bvind ?retning\b/, 'wind_direction', 0.95, 'wind direction'),
  R(/\brain\b|\bregen\b|\bneerslag\b|\bniederschlag\b|\bnedbør\b|\bnedbor\b|\bregn\b|\bprecipitation\b/, 'rain', 0.9, 'rain'),
  R(
    /\bair ?pressure\b|\bluchtdruk\b|\bluftdruck\b|\blufttryk\b|\bbarometer\w*|\batmospheric pressure\b/,
    'air_pressure',
    0.9,
    'air pressure',
  ),
  R(/\bpressure\b|\bdruk\b|\bdruck\b|\btryk\b/, 'air_pressure', 0.5, 'a pressure without saying which'),
];

export const NAME_RULES: readonly NameRule[] = [...VENDOR, ...NAMES];

/** Words that make a column something other than a climate reading. */
export const NOT_A_READING =
  /\bdiff\w*|\bdifference\b|\bverschil\b|\bforskel\b|\bbatter\w*|\bprobability\b|\bkans\b|\bwahrscheinlichkeit\b|\bsandsynlighed\b|\befficiency\b|\brendement\b|\bf0\b|\bfmax\b|\bdissolved\b|\bopgelost\b|\bsaturation\b|\bvoltage\b|\brssi\b|\bsignal\b|\bstatus\b|\balarm\w*|\bdrain\b|\bdrip\b|\bdruppel\w*|\bgift\b|\bpercentile\b|\bstd ?dev\b|\bminimum\b|\bmaximum\b/;

/** Words that say a column is a setpoint (a target), not a measurement. */
export const SETPOINT =
  /\bsp\b|\bset ?point\w*|\bsetp\b|\bsætpunkt\w*|\bsaetpunkt\w*|\bkrav\b|\bber\b|\bberekend\b|\bsoll\w*|\btarget\b|\bstreefwaarde\b|\bgewenst\b/;

export const HEATING = /\bverwarm\w*|\bverw\b|\bstook\w*|\bheat\w*|\bheiz\w*|\bvarme\w*|\bwarmte\w*/;
export const VENTILATION = /\bventilat\w*|\bluchten\b|\bluft(?:ung|ning)\w*|\blueften\b|\bvent\b/;
export const PIPE = /\bbuis\w*|\bpipe\w*|\brohr\w*|\brør\w*|\bflow\b/;
export const HUMIDITY = /\brv\b|\brh\b|\bhumidity\b|\bvocht\w*|\bfeucht\w*|\bfugt\w*/;
export const CO2 = /\bco2\w*/;

/** Words that say a reading is from outside (a weather station). */
export const OUTSIDE = /\bbuiten\w*|\boutside\b|\boutdoor\w*|\bweather\b|\bweer\w*|\bmeteo\w*|\bau(?:ss|ß)en\w*|\bude\w*|\budendørs\b/;

/** Headers of time columns. */
export const TIME_HEADER = {
  datetime:
    /^(?:date ?time|datetime|timestamp|tijdstip|datum ?tijd|datum ?zeit|zeitstempel|tidspunkt|dato ?tid|time stamp|tijd|time|zeit|tid|datum|date|dato)$/,
  date: /^(?:datum|date|dato|dag|day|tag)$/,
  time: /^(?:tijd|time|zeit|tid|klokkeslæt|uur|hour|uhrzeit)$/,
  start:
    /(?:^|\s)(?:van|vanaf|begin|start|from|von|fra|begintijd|starttijd|start ?time|periode? start|period start)$|^(?:start|begin|van)\s/,
  end: /(?:^|\s)(?:tot|tot en met|eind|einde|end|to|bis|til|eindtijd|end ?time|periode? end|period end)$|^(?:end|eind|tot)\s/,
};
