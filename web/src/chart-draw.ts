import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSpec {
  /** Instants, seconds since 1970 (uPlot's time axis). */
  x: number[];
  series: { label: string; values: (number | null)[]; color: string; width?: number; dash?: number[]; points?: boolean }[];
  /** A shaded range between two series (indices into `series`), e.g. the forecast's 10th to 90th percentile. */
  band?: [number, number];
  yLabel: string;
  height?: number;
  /** Show the x axis as ISO weeks. */
  weeks?: boolean;
}

export function draw(el: HTMLElement, spec: ChartSpec): () => void {
  const width = () => Math.max(280, el.clientWidth);
  const opts: uPlot.Options = {
    width: width(),
    height: spec.height ?? 280,
    scales: { x: { time: true } },
    axes: [
      {
        stroke: '#222',
        grid: { stroke: '#ddd' },
        ...(spec.weeks
          ? {
              values: (_u: uPlot, splits: number[]) =>
                splits.map((s) => {
                  const d = new Date(s * 1000);
                  const t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
                  const dow = (d.getUTCDay() + 6) % 7;
                  const th = t + (3 - dow) * 86400000;
                  const y = new Date(th).getUTCFullYear();
                  return `W${1 + Math.floor((th - Date.UTC(y, 0, 1)) / 604800000)}`;
                }),
            }
          : {}),
      },
      { stroke: '#222', grid: { stroke: '#ddd' }, label: spec.yLabel, size: 60 },
    ],
    series: [
      {},
      ...spec.series.map((s) => ({
        label: s.label,
        stroke: s.color,
        width: s.width ?? 2,
        dash: s.dash,
        points: { show: s.points ?? false },
        spanGaps: false,
      })),
    ],
    bands: spec.band ? [{ series: [spec.band[1] + 1, spec.band[0] + 1] as [number, number], fill: 'rgba(20,83,45,0.15)' }] : undefined,
  };
  const plot = new uPlot(opts, [spec.x, ...spec.series.map((s) => s.values)] as uPlot.AlignedData, el);
  const resize = new ResizeObserver(() => plot.setSize({ width: width(), height: spec.height ?? 280 }));
  resize.observe(el);
  return () => {
    resize.disconnect();
    plot.destroy();
  };
}
