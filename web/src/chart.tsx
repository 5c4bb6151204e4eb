// A line chart, drawn by uPlot, which is loaded only by the screens that chart (its own chunk).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ChartSpec } from './chart-draw';

export type { ChartSpec };

export function Chart({ spec, label }: { spec: ChartSpec; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let destroy: (() => void) | undefined;
    let live = true;
    import('./chart-draw').then(
      (m) => {
        if (live && box.current) destroy = m.draw(box.current, spec);
      },
      () => setFailed(true),
    );
    return () => {
      live = false;
      destroy?.();
    };
  }, [spec]);
  return (
    <div class="chart" role="img" aria-label={label} ref={box}>
      {failed ? <p>The chart could not be drawn; the numbers are below.</p> : null}
    </div>
  );
}
