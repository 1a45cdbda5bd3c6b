import { useEffect, useRef } from 'react';

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  values: number[];
  colour: string;
}

/**
 * A chart drawn by uPlot (canvas, no inline script or style needed), as wide as its box. The figures
 * are also in a table for screen readers and for anyone who wants the numbers.
 */
export function Chart({ title, labels, series, bars = false, height = 200 }: { title: string; labels: string[]; series: Series[]; bars?: boolean; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element || labels.length === 0) return;
    const x = labels.map((_, i) => i);
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height,
      legend: { show: series.length > 1 },
      scales: { x: { time: false } },
      axes: [
        { values: (_u, ticks) => ticks.map((t) => labels[t] ?? ''), stroke: '#44505c', grid: { show: false } },
        { stroke: '#44505c', grid: { stroke: '#e3e8ee' } },
      ],
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.colour,
          fill: `${s.colour}55`,
          width: 2,
          paths: bars ? uPlot.paths.bars!({ size: [0.7, 40] }) : undefined,
          points: { show: !bars && labels.length < 40 },
        })),
      ],
    };
    const plot = new uPlot(options, [x, ...series.map((s) => s.values)], element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, element.clientWidth), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
    // Redrawn when the figures change, not when a render hands over equal new arrays.
  }, [JSON.stringify([labels, series]), bars, height]);

  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} role="img" aria-label={`${title}: chart; the figures are in the table that follows`} />
      {/* A table ignores width and height: the box around it is what hides it. */}
      <div className="sr-only">
      <table>
        <caption>{title}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            {series.map((s) => (
              <th key={s.label} scope="col">
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {labels.map((l, i) => (
            <tr key={l}>
              <th scope="row">{l}</th>
              {series.map((s) => (
                <td key={s.label}>{s.values[i]}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      {labels.length === 0 && <p className="muted">No data yet.</p>}
    </figure>
  );
}
