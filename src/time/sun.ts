/**
 * The sun's elevation above the horizon at an instant and place, to tell day hours
 * from night hours where no light is measured. A low-precision solar position
 * (mean anomaly and ecliptic longitude with the first two equation-of-centre terms,
 * Greenwich mean sidereal time): good to a fraction of a degree, far finer than
 * "is the sun up this hour" needs.
 */
const RAD = Math.PI / 180;

export function sunElevationDeg(ms: number, latitude: number, longitude: number): number {
  const d = ms / 86_400_000 - 10_957.5; // days since 2000-01-01T12:00Z
  const g = (357.529 + 0.98560028 * d) * RAD;
  const q = 280.459 + 0.98564736 * d;
  const lambda = (q + 1.915 * Math.sin(g) + 0.02 * Math.sin(2 * g)) * RAD;
  const eps = (23.439 - 0.00000036 * d) * RAD;
  const ra = Math.atan2(Math.cos(eps) * Math.sin(lambda), Math.cos(lambda));
  const dec = Math.asin(Math.sin(eps) * Math.sin(lambda));
  const gmstHours = (((18.697374558 + 24.06570982441908 * d) % 24) + 24) % 24;
  const hourAngle = (gmstHours * 15 + longitude) * RAD - ra;
  const lat = latitude * RAD;
  return Math.asin(Math.sin(lat) * Math.sin(dec) + Math.cos(lat) * Math.cos(dec) * Math.cos(hourAngle)) / RAD;
}
