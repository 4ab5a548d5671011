// Where an attached resource goes in the prompt, as Author's Note offers it:
// in the chat at a depth (messages from the end; 0 is after the last one)
// with a role, or before or after the main prompt.

import { useId } from 'react';
import { POSITIONS, ROLES, type Placement, type Position, type Role } from './placement';
import { MAX_INJECTION_DEPTH } from '../../host/sillytavern-chat';
import { useTr } from '../../base/tr';

export function PlacementFields(props: { value: Placement; disabled?: boolean; label: string; onChange(p: Placement): void }) {
  const tr = useTr();
  const id = useId();
  const p = props.value;
  const set = (patch: Partial<Placement>) => props.onChange({ ...p, ...patch });
  return (
    <fieldset className="tt-mcp-placement" disabled={props.disabled}>
      <legend>{props.label}</legend>
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-position`}>{tr('placement_position')}</label>
        <select id={`${id}-position`} className="text_pole" value={p.position} onChange={(e) => set({ position: e.target.value as Position })}>
          {POSITIONS.map((v) => (
            <option key={v} value={v}>
              {tr(`position_${v}`)}
            </option>
          ))}
        </select>
      </div>
      {p.position === 'in_chat' && (
        <div className="tt-mcp-field">
          <label htmlFor={`${id}-depth`}>{tr('placement_depth')}</label>
          <input
            id={`${id}-depth`}
            className="text_pole"
            type="number"
            min={0}
            max={MAX_INJECTION_DEPTH}
            step={1}
            inputMode="numeric"
            aria-describedby={`${id}-depth-hint`}
            value={p.depth}
            onChange={(e) => {
              const n = Math.trunc(Number(e.target.value));
              if (Number.isFinite(n)) set({ depth: Math.min(MAX_INJECTION_DEPTH, Math.max(0, n)) });
            }}
          />
          <small id={`${id}-depth-hint`} className="tt-mcp-hint">
            {tr('placement_depth_hint')}
          </small>
        </div>
      )}
      <div className="tt-mcp-field">
        <label htmlFor={`${id}-role`}>{tr('placement_role')}</label>
        <select id={`${id}-role`} className="text_pole" value={p.role} onChange={(e) => set({ role: e.target.value as Role })}>
          {ROLES.map((v) => (
            <option key={v} value={v}>
              {tr(`placement_role_${v}`)}
            </option>
          ))}
        </select>
      </div>
    </fieldset>
  );
}

/** A placement in a few words ("In the chat at depth 4, as system"). */
export function placementText(p: Placement, tr: ReturnType<typeof useTr>): string {
  const role = tr(`placement_role_${p.role}`);
  return p.position === 'in_chat' ? tr('placement_in_chat', { depth: p.depth, role }) : tr(`placement_${p.position}`, { role });
}
