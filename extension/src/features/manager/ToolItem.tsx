// One discovered tool (reference §8.4): name, Custom chip, Off/Ask/Allow,
// the description the model sees, parameter chips, and the raw schema.

import { useId } from 'react';
import type {
  JsonObject,
  JsonValue,
  McpDiscoveredTool,
  McpToolPermission,
  ToolDescriptionOverride,
} from '../../../../jsapi/tauritavern-mcp';
import { PERMISSIONS } from '../../base/protocol';
import { useTr } from '../../base/tr';
import { isRecord } from '../../base/values';

export interface ToolItemProps {
  tool: McpDiscoveredTool;
  override: ToolDescriptionOverride | undefined;
  /** A permission change for this tool is being saved. */
  busy: boolean;
  onPermission(permission: McpToolPermission): void;
  onEditDescription(): void;
}

function isObject(v: JsonValue | undefined): v is JsonObject {
  return isRecord(v);
}

interface ParameterChip {
  name: string;
  required: boolean;
  description?: string;
}

/** The parameters of an input schema, for the chips under a tool. */
export function parameterChips(schema: JsonObject): ParameterChip[] {
  const props = schema.properties;
  if (!isObject(props)) return [];
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((x) => typeof x === 'string') : []);
  return Object.keys(props).map((name) => {
    const p = props[name];
    const description = isObject(p) && typeof p.description === 'string' ? p.description : undefined;
    return { name, required: required.has(name), ...(description !== undefined ? { description } : {}) };
  });
}

export function ToolItem({ tool, override, busy, onPermission, onEditDescription }: ToolItemProps) {
  const tr = useTr();
  const id = useId();
  const title = tool.title ?? tool.nativeName;
  const custom = override?.description !== undefined;
  const description = override?.description ?? tool.description;
  const chips = parameterChips(tool.inputSchema);
  const schema = {
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema } : {}),
    annotations: tool.annotations,
  };
  return (
    <li className={`tt-mcp-tool tt-mcp-tool-${tool.permission}`}>
      <div className="tt-mcp-tool-head">
        <div className="tt-mcp-tool-name">
          <span className="tt-mcp-tool-title">{title}</span>
          {tool.title !== undefined && tool.title !== tool.nativeName && (
            <code className="tt-mcp-native-name">{tool.nativeName}</code>
          )}
          {custom && <span className="tt-mcp-chip tt-mcp-chip-custom">{tr('custom')}</span>}
          <button
            type="button"
            className="menu_button tt-mcp-icon-button tt-mcp-flat"
            title={tr('edit_description')}
            aria-label={tr('edit_description')}
            onClick={onEditDescription}
          >
            <i className="fa-solid fa-pen" aria-hidden="true" />
          </button>
        </div>
        <div
          className="tt-mcp-segmented tt-mcp-permission"
          role="radiogroup"
          aria-label={tr('permission_for', { name: title })}
          aria-busy={busy}
        >
          {PERMISSIONS.map((p) => (
            <label
              key={p}
              className={`tt-mcp-segment${tool.permission === p ? ' tt-mcp-segment-on' : ''} tt-mcp-segment-${p}`}
            >
              <input
                type="radio"
                name={`${id}-permission`}
                value={p}
                checked={tool.permission === p}
                disabled={busy}
                onChange={() => onPermission(p)}
              />
              <span>{tr(`permission_${p}`)}</span>
            </label>
          ))}
        </div>
      </div>
      {description !== undefined && description !== '' && <p className="tt-mcp-description">{description}</p>}
      {chips.length > 0 && (
        <ul className="tt-mcp-chips">
          {chips.map((c) => (
            <li key={c.name} className="tt-mcp-chip" {...(c.description !== undefined ? { title: c.description } : {})}>
              {c.name}
              {c.required && (
                <>
                  <span aria-hidden="true">*</span>
                  <span className="tt-mcp-sr-only"> ({tr('required_marker')})</span>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <details className="tt-mcp-schema">
        <summary>{tr('schema_hints')}</summary>
        <pre className="tt-mcp-schema-json">{JSON.stringify(schema, null, 2)}</pre>
      </details>
    </li>
  );
}
