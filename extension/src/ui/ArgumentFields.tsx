// A form's text fields for a prompt's arguments or a resource template's
// variables: the name (or title), required ones marked, the description,
// and — when the server offers completion — its suggestions for what is
// typed so far, in the input's own list (a datalist: the browser's
// accessible combobox). Suggestions are asked for on focus and as the user
// types, the newest answer winning; a failure only means no suggestions.

import { useEffect, useId, useRef, useState } from 'react';
import { useTr } from '../base/tr';

export interface ArgumentField {
  name: string;
  title?: string;
  description?: string;
  required: boolean;
}

/** Asks the server for values of field name, given what is typed and the other fields' values. */
export type Completer = (name: string, value: string, values: Readonly<Record<string, string>>) => Promise<string[]>;

/** How long typing must pause before suggestions are asked for. */
export const COMPLETE_DELAY_MS = 150;

function ArgumentInput(props: {
  field: ArgumentField;
  value: string;
  values: Readonly<Record<string, string>>;
  error: string | undefined;
  disabled: boolean;
  complete: Completer | undefined;
  autoFocus: boolean;
  onChange(value: string): void;
}) {
  const tr = useTr();
  const id = useId();
  const { field, complete } = props;
  const [suggestions, setSuggestions] = useState<string[]>([]);
  const seq = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const valuesRef = useRef(props.values);
  valuesRef.current = props.values;
  useEffect(() => () => clearTimeout(timer.current), []);

  const ask = (value: string, delay: number) => {
    if (!complete) return;
    clearTimeout(timer.current);
    const mine = ++seq.current;
    timer.current = setTimeout(() => {
      complete(field.name, value, valuesRef.current).then(
        (values) => mine === seq.current && setSuggestions(values),
        () => mine === seq.current && setSuggestions([]),
      );
    }, delay);
  };

  const descId = field.description !== undefined ? `${id}-desc` : undefined;
  const errorId = props.error !== undefined ? `${id}-error` : undefined;
  const listId = complete ? `${id}-list` : undefined;
  return (
    <div className={props.error !== undefined ? 'tt-mcp-field tt-mcp-field-invalid' : 'tt-mcp-field'}>
      <label htmlFor={id}>
        {field.title ?? field.name}
        {field.title !== undefined && field.title !== field.name && <code className="tt-mcp-arg-name"> {field.name}</code>}
        {field.required && (
          <span className="tt-mcp-required" aria-hidden="true">
            {' '}
            *
          </span>
        )}
      </label>
      <input
        id={id}
        className="text_pole"
        type="text"
        autoComplete="off"
        spellCheck={false}
        required={field.required}
        aria-required={field.required || undefined}
        aria-invalid={props.error !== undefined ? true : undefined}
        aria-describedby={[descId, errorId].filter(Boolean).join(' ') || undefined}
        list={listId}
        disabled={props.disabled}
        value={props.value}
        {...(props.autoFocus ? { 'data-autofocus': '' } : {})}
        onFocus={() => ask(props.value, 0)}
        onChange={(e) => {
          props.onChange(e.target.value);
          ask(e.target.value, COMPLETE_DELAY_MS);
        }}
      />
      {listId !== undefined && (
        <datalist id={listId} aria-label={tr('suggestions_for', { name: field.name })}>
          {suggestions.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
      )}
      {descId !== undefined && (
        <small id={descId} className="tt-mcp-hint">
          {field.description}
        </small>
      )}
      {errorId !== undefined && (
        <small id={errorId} className="tt-mcp-field-error">
          {props.error}
        </small>
      )}
    </div>
  );
}

/** The fields, in order; errors by field name (a required one left empty). */
export function ArgumentFields(props: {
  fields: ArgumentField[];
  values: Readonly<Record<string, string>>;
  errors: Readonly<Record<string, string>>;
  disabled?: boolean;
  complete?: Completer | undefined;
  onChange(name: string, value: string): void;
}) {
  return (
    <>
      {props.fields.map((f, i) => (
        <ArgumentInput
          key={f.name}
          field={f}
          value={props.values[f.name] ?? ''}
          values={props.values}
          error={props.errors[f.name]}
          disabled={props.disabled ?? false}
          complete={props.complete}
          autoFocus={i === 0}
          onChange={(v) => props.onChange(f.name, v)}
        />
      ))}
    </>
  );
}

/** The required fields left empty, each with its error. */
export function missingRequired(fields: readonly ArgumentField[], values: Readonly<Record<string, string>>, message: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fields) if (f.required && (values[f.name] ?? '').trim() === '') out[f.name] = message;
  return out;
}
