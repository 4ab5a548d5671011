// One form field built from a JSON schema property (dialogs/schema-form.ts),
// for the test-call console (a tool's arguments, typed exactly: every value
// is text, numbers as written) and for a server's question (elicitation:
// labelled by the schema's titles, strings with the input type of their
// format, the schema's bounds said beside the field).

import { useId, type ReactNode } from 'react';
import { fieldErrorText, type FieldError, type SchemaField } from './schema-form';
import type { Tr } from '../base/texts';
import { useTr } from '../base/tr';

export type FieldVariant = 'arguments' | 'elicitation';

export interface SchemaFieldInputProps {
  field: SchemaField;
  value: string;
  error: FieldError | undefined;
  onChange(value: string): void;
  /** 'arguments' (the default): the test call's; 'elicitation': a server's question. */
  variant?: FieldVariant;
  /** Put the focus here when the dialog opens. */
  autoFocus?: boolean;
}

/** The input type of a string format (elicitation). */
function inputType(field: SchemaField): string {
  switch (field.format) {
    case 'email':
      return 'email';
    case 'uri':
      return 'url';
    case 'date':
      return 'date';
    case 'date-time':
      return 'datetime-local';
    default:
      return 'text';
  }
}

/** The schema's bounds in words (elicitation), or ''. */
export function boundsHint(field: SchemaField, tr: Tr): string {
  const parts: string[] = [];
  if (field.kind === 'text') {
    if (field.minLength !== undefined && field.minLength > 0) parts.push(tr('field_too_short', { count: field.minLength }));
    if (field.maxLength !== undefined) parts.push(tr('field_too_long', { count: field.maxLength }));
  } else if (field.kind === 'number' || field.kind === 'integer') {
    if (field.minimum !== undefined) parts.push(tr('field_below', { limit: field.minimum }));
    if (field.maximum !== undefined) parts.push(tr('field_above', { limit: field.maximum }));
  } else if (field.kind === 'multi') {
    if (field.minItems !== undefined && field.minItems > 0) parts.push(tr('field_too_few', { count: field.minItems }));
    if (field.maxItems !== undefined) parts.push(tr('field_too_many', { count: field.maxItems }));
  }
  return parts.join(' ');
}

/** An option's caption: its title, or its JSON token (the test call shows "fast" as "\"fast\""). */
function optionLabel(field: SchemaField, i: number, variant: FieldVariant): string {
  const token = field.options?.[i] ?? '';
  const label = field.labels?.[i];
  if (label !== undefined) return label;
  if (variant === 'elicitation') {
    const v: unknown = JSON.parse(token);
    return typeof v === 'string' ? v : token;
  }
  return token;
}

export function SchemaFieldInput({ field, value, error, onChange, variant = 'arguments', autoFocus }: SchemaFieldInputProps) {
  const tr = useTr();
  const id = useId();
  const asked = variant === 'elicitation';
  const bounds = asked ? boundsHint(field, tr) : '';
  const descId = field.description !== undefined ? `${id}-desc` : undefined;
  const hintId = field.kind === 'lines' || bounds !== '' ? `${id}-hint` : undefined;
  const errorId = error !== undefined ? `${id}-error` : undefined;
  const describedBy = [descId, hintId, errorId].filter(Boolean).join(' ') || undefined;
  const focus = autoFocus ? { 'data-autofocus': '' } : {};
  const common = {
    id,
    'aria-invalid': error !== undefined ? true : undefined,
    'aria-describedby': describedBy,
    required: field.required,
    ...focus,
  } as const;
  const caption = asked ? (field.title ?? field.name) : field.name;
  const label = (
    <>
      {caption}
      {field.required && (
        <span className="tt-mcp-required" aria-hidden="true">
          {' '}
          *
        </span>
      )}
    </>
  );
  const group = {
    'aria-labelledby': `${id}-label`,
    'aria-describedby': describedBy,
    'aria-invalid': error !== undefined ? true : undefined,
    'aria-required': field.required || undefined,
  } as const;

  let control: ReactNode;
  switch (field.kind) {
    case 'boolean':
      control = (
        <div className="tt-mcp-segmented" role="radiogroup" {...group}>
          {(['', 'true', 'false'] as const).map((v, i) => (
            <label key={v} className={value === v ? 'tt-mcp-segment tt-mcp-segment-on' : 'tt-mcp-segment'}>
              <input
                type="radio"
                name={id}
                value={v}
                checked={value === v}
                onChange={() => onChange(v)}
                {...(i === 0 ? focus : {})}
              />
              <span>{v === '' ? tr('not_set') : asked ? tr(v === 'true' ? 'yes' : 'no') : v}</span>
            </label>
          ))}
        </div>
      );
      break;
    case 'enum':
      control = (
        <select {...common} className="text_pole" value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{tr('not_set')}</option>
          {field.options?.map((o, i) => (
            <option key={o} value={o}>
              {optionLabel(field, i, variant)}
            </option>
          ))}
        </select>
      );
      break;
    case 'multi': {
      const chosen = new Set(value.split('\n').filter((t) => t !== ''));
      const toggle = (token: string, on: boolean) => {
        const next = new Set(chosen);
        if (on) next.add(token);
        else next.delete(token);
        onChange((field.options ?? []).filter((o) => next.has(o)).join('\n'));
      };
      control = (
        <div className="tt-mcp-choices" role="group" {...group}>
          {field.options?.map((o, i) => (
            <label key={o} className="checkbox_label">
              <input type="checkbox" checked={chosen.has(o)} onChange={(e) => toggle(o, e.target.checked)} {...(i === 0 ? focus : {})} />
              <span>{optionLabel(field, i, variant)}</span>
            </label>
          ))}
        </div>
      );
      break;
    }
    case 'lines':
    case 'json':
      control = (
        <textarea
          {...common}
          className={field.kind === 'json' ? 'text_pole tt-mcp-code-input' : 'text_pole'}
          rows={field.kind === 'json' ? 4 : 3}
          spellCheck={false}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      );
      break;
    default:
      control = (
        <input
          {...common}
          className="text_pole"
          type={asked && field.kind === 'text' ? inputType(field) : 'text'}
          step={asked && field.format === 'date-time' ? 1 : undefined}
          maxLength={asked && field.kind === 'text' && field.format === undefined ? field.maxLength : undefined}
          autoComplete="off"
          inputMode={field.kind === 'number' ? 'decimal' : field.kind === 'integer' ? 'numeric' : undefined}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      );
  }

  const grouped = field.kind === 'boolean' || field.kind === 'multi';
  return (
    <div className={error !== undefined ? 'tt-mcp-field tt-mcp-field-invalid' : 'tt-mcp-field'}>
      {grouped ? (
        <span id={`${id}-label`} className="tt-mcp-label">
          {label}
        </span>
      ) : (
        <label htmlFor={id}>{label}</label>
      )}
      {control}
      {descId !== undefined && (
        <small id={descId} className="tt-mcp-hint">
          {field.description}
        </small>
      )}
      {hintId !== undefined && (
        <small id={hintId} className="tt-mcp-hint">
          {field.kind === 'lines' ? tr('one_per_line') : bounds}
        </small>
      )}
      {errorId !== undefined && error !== undefined && (
        <small id={errorId} className="tt-mcp-field-error">
          {fieldErrorText(error, tr)}
        </small>
      )}
    </div>
  );
}
