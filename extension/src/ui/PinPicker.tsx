// The tools pinned beside the search tools (issue 31): the pinned ones
// first, in the order pinned (the order the model's tools array carries
// them in), then a checkbox per other tool in the order given. With many
// tools a filter narrows the others; the pinned stay in view. Used by the
// tool set editor (a server selected whole) and by the default's search
// settings (every offered tool).

import { useId, useState } from 'react';
import { useTr } from '../base/tr';

export interface Pinnable {
  /** The ToolId. */
  id: string;
  /** What the user reads: the tool's title or name, and its server. */
  label: string;
}

/** Above this many tools the picker offers a filter. */
const FILTER_FROM = 12;

export function PinPicker(props: {
  tools: readonly Pinnable[];
  pinned: readonly string[];
  /** The most pins allowed in all (the backend's 32). */
  max: number;
  disabled?: boolean;
  onChange(pinned: string[]): void;
}) {
  const tr = useTr();
  const id = useId();
  const [filter, setFilter] = useState('');
  const words = filter.toLowerCase().split(/\s+/).filter((w) => w !== '');
  const byId = new Map(props.tools.map((t) => [t.id, t]));
  const pinned = props.pinned.flatMap((p) => (byId.has(p) ? [byId.get(p)!] : []));
  const matches = (t: Pinnable) => words.every((w) => t.label.toLowerCase().includes(w));
  const others = props.tools.filter((t) => !props.pinned.includes(t.id) && matches(t));
  const full = props.pinned.length >= props.max;
  const set = (tool: string, on: boolean) =>
    props.onChange(on ? [...props.pinned.filter((p) => p !== tool), tool] : props.pinned.filter((p) => p !== tool));
  const item = (t: Pinnable, on: boolean) => (
    <li key={t.id}>
      <label className="checkbox_label">
        <input type="checkbox" checked={on} disabled={props.disabled || (!on && full)} onChange={(e) => set(t.id, e.target.checked)} />
        <span>{t.label}</span>
      </label>
    </li>
  );
  return (
    <div className="tt-mcp-pins">
      {pinned.length > 0 && <ul className="tt-mcp-pins-list tt-mcp-pins-pinned">{pinned.map((t) => item(t, true))}</ul>}
      {props.tools.length > FILTER_FROM && (
        <input
          className="text_pole"
          type="search"
          value={filter}
          placeholder={tr('pins_filter')}
          aria-label={tr('pins_filter')}
          aria-controls={`${id}-list`}
          onChange={(e) => setFilter(e.target.value)}
        />
      )}
      <ul id={`${id}-list`} className="tt-mcp-pins-list">
        {others.map((t) => item(t, false))}
      </ul>
      {others.length === 0 && words.length > 0 && !pinned.some(matches) && <p className="tt-mcp-note">{tr('pins_none_match')}</p>}
      {full && <small className="tt-mcp-hint">{tr('pins_full', { max: props.max })}</small>}
    </div>
  );
}
