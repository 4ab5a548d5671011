// The test-call form from a tool's input schema (reference §8.8), and the
// arguments JSON assembled from it. The JSON is spliced from the typed text
// (numbers are copied as written, never parsed into a double), so an
// integer like 9007199254740993 reaches the server unchanged.

import type { JsonObject, JsonValue } from '../../../jsapi/tauritavern-mcp';

export type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'lines' | 'json';

/** The type of each line of a 'lines' field. */
export type LineKind = 'string' | 'number' | 'integer';

export interface SchemaField {
  name: string;
  required: boolean;
  description?: string;
  kind: FieldKind;
  /** enum: the JSON tokens offered, in schema order. */
  options?: string[];
  /** lines: what each line holds. */
  lineKind?: LineKind;
  /** The field's starting text, from the schema's default when it fits the field. */
  initial: string;
}

/** The text keys of the field errors. */
export type FieldError = 'field_required' | 'field_number' | 'field_integer' | 'field_json';

export type CollectResult = { ok: true; json: string } | { ok: false; errors: Record<string, FieldError> };

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const INTEGER = /^-?(0|[1-9]\d*)$/;

function isObject(v: JsonValue | undefined): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The single non-null type a schema names (type: "x" or ["x", "null"]). */
function schemaType(schema: JsonObject): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.filter((x): x is string => typeof x === 'string' && x !== 'null');
    if (named.length === 1) return named[0];
  }
  return undefined;
}

function isScalar(v: JsonValue): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function fieldFor(name: string, schema: JsonValue | undefined, required: boolean): SchemaField {
  const s: JsonObject = isObject(schema) ? schema : {};
  const description = typeof s.description === 'string' && s.description.trim() !== '' ? s.description : undefined;
  const base = { name, required, ...(description !== undefined ? { description } : {}) };
  const def = s.default;
  const values = s.enum;
  if (Array.isArray(values) && values.length > 0 && values.every(isScalar)) {
    const options = values.map((v) => JSON.stringify(v));
    const initial = def !== undefined && isScalar(def) && values.includes(def) ? JSON.stringify(def) : '';
    return { ...base, kind: 'enum', options, initial };
  }
  switch (schemaType(s)) {
    case 'string':
      return { ...base, kind: 'text', initial: typeof def === 'string' ? def : '' };
    case 'number':
      return { ...base, kind: 'number', initial: typeof def === 'number' && Number.isFinite(def) ? String(def) : '' };
    case 'integer':
      return { ...base, kind: 'integer', initial: typeof def === 'number' && Number.isInteger(def) ? String(def) : '' };
    case 'boolean':
      return { ...base, kind: 'boolean', initial: typeof def === 'boolean' ? String(def) : '' };
    case 'array': {
      const items = isObject(s.items) ? s.items : undefined;
      const itemType = items && !Array.isArray(items.enum) ? schemaType(items) : undefined;
      if (itemType === 'string' || itemType === 'number' || itemType === 'integer') {
        const fits = (v: JsonValue) =>
          itemType === 'string' ? typeof v === 'string' : itemType === 'integer' ? Number.isInteger(v) : typeof v === 'number';
        const initial = Array.isArray(def) && def.every(fits) ? def.map(String).join('\n') : '';
        return { ...base, kind: 'lines', lineKind: itemType, initial };
      }
      break;
    }
  }
  return { ...base, kind: 'json', initial: def !== undefined ? JSON.stringify(def, null, 2) : '' };
}

/** The form fields of an input schema: one per property, in schema order. */
export function schemaFields(inputSchema: JsonObject): SchemaField[] {
  const properties = inputSchema.properties;
  if (!isObject(properties)) return [];
  const required = new Set(
    Array.isArray(inputSchema.required) ? inputSchema.required.filter((x): x is string => typeof x === 'string') : [],
  );
  return Object.keys(properties).map((name) => fieldFor(name, properties[name], required.has(name)));
}

/** The starting values of a form: field name → text. */
export function initialValues(fields: SchemaField[]): Record<string, string> {
  return Object.fromEntries(fields.map((f) => [f.name, f.initial]));
}

type Token = { token: string } | { unset: true } | { error: FieldError };

function numberToken(text: string, kind: 'number' | 'integer'): Token {
  if (kind === 'integer') return INTEGER.test(text) ? { token: text } : { error: 'field_integer' };
  return NUMBER.test(text) ? { token: text } : { error: 'field_number' };
}

function fieldToken(field: SchemaField, raw: string): Token {
  const trimmed = raw.trim();
  switch (field.kind) {
    case 'text':
      return trimmed === '' ? { unset: true } : { token: JSON.stringify(raw) };
    case 'number':
    case 'integer':
      return trimmed === '' ? { unset: true } : numberToken(trimmed, field.kind);
    case 'boolean':
      return raw === 'true' || raw === 'false' ? { token: raw } : { unset: true };
    case 'enum':
      return raw !== '' && field.options?.includes(raw) ? { token: raw } : { unset: true };
    case 'lines': {
      const lines = raw
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l !== '');
      if (lines.length === 0) return { unset: true };
      const items: string[] = [];
      for (const line of lines) {
        if (field.lineKind === 'number' || field.lineKind === 'integer') {
          const t = numberToken(line, field.lineKind);
          if ('error' in t) return t;
          if ('token' in t) items.push(t.token);
        } else {
          items.push(JSON.stringify(line));
        }
      }
      return { token: `[${items.join(',')}]` };
    }
    case 'json':
      if (trimmed === '') return { unset: true };
      try {
        JSON.parse(trimmed);
      } catch {
        return { error: 'field_json' };
      }
      return { token: trimmed };
  }
}

/**
 * collectArguments assembles the arguments object from the form values,
 * or reports each field's error. Unset optional fields are omitted; a
 * form without fields gives {}.
 */
export function collectArguments(fields: SchemaField[], values: Record<string, string>): CollectResult {
  const parts: string[] = [];
  const errors: Record<string, FieldError> = {};
  for (const field of fields) {
    const t = fieldToken(field, values[field.name] ?? '');
    if ('error' in t) errors[field.name] = t.error;
    else if ('unset' in t) {
      if (field.required) errors[field.name] = 'field_required';
    } else parts.push(`${JSON.stringify(field.name)}:${t.token}`);
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, json: `{${parts.join(',')}}` };
}
