// The test-call form from a tool's input schema (reference §8.8), and the
// arguments JSON assembled from it. The JSON is spliced from the typed text
// (numbers are copied as written, never parsed into a double), so an
// integer like 9007199254740993 reaches the server unchanged.
//
// The same fields serve a server's question (elicitation, SPEC §10): the
// requested schema is the specification's flat subset (strings with a
// format and lengths, numbers with bounds, booleans, single- and
// multi-select enums with titles), and collectContent gives the answer as an
// object, checked against the bounds the schema states. The test call does
// not check bounds: the server's own answer to an out-of-range argument is
// what a test is for.

import type { JsonObject, JsonValue } from '../../../jsapi/tauritavern-mcp';
import type { Tr } from '../base/texts';
import { isRecord } from '../base/values';

export type FieldKind = 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi' | 'lines' | 'json';

/** The string formats a requested schema may name (the specification's subset). */
export type StringFormat = 'email' | 'uri' | 'date' | 'date-time';

const FORMATS: readonly string[] = ['email', 'uri', 'date', 'date-time'] satisfies StringFormat[];

/** The type of each line of a 'lines' field. */
export type LineKind = 'string' | 'number' | 'integer';

export interface SchemaField {
  name: string;
  required: boolean;
  /** The schema's title (a form labels the field with it). */
  title?: string;
  description?: string;
  kind: FieldKind;
  /** enum, multi: the JSON tokens offered, in schema order. */
  options?: string[];
  /** enum, multi: each option's title (enumNames, or oneOf/anyOf titles), in the order of options. */
  labels?: string[];
  /** lines: what each line holds. */
  lineKind?: LineKind;
  /** text: the format the schema names, when it is one of the subset's. */
  format?: StringFormat;
  /** The bounds the schema states: text lengths, number values, multi-select counts. */
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  /**
   * The field's starting text, from the schema's default when it fits the
   * field; multi: the chosen tokens, one per line.
   */
  initial: string;
}

/** A field's error: a text key, or a bound that was not kept (its text takes the bound). */
export type FieldError =
  | 'field_required'
  | 'field_number'
  | 'field_integer'
  | 'field_json'
  | { key: 'field_below' | 'field_above'; limit: number }
  | { key: 'field_too_short' | 'field_too_long' | 'field_too_few' | 'field_too_many'; count: number };

/** The text of a field error. */
export function fieldErrorText(error: FieldError, tr: Tr): string {
  if (typeof error === 'string') return tr(error);
  if ('limit' in error) return tr(error.key, { limit: error.limit });
  return tr(error.key, { count: error.count });
}

export type CollectResult = { ok: true; json: string } | { ok: false; errors: Record<string, FieldError> };

export type ContentResult = { ok: true; content: Record<string, JsonValue> } | { ok: false; errors: Record<string, FieldError> };

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const INTEGER = /^-?(0|[1-9]\d*)$/;

function isObject(v: JsonValue | undefined): v is JsonObject {
  return isRecord(v);
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

function nonNegativeInteger(v: JsonValue | undefined): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

function finiteNumber(v: JsonValue | undefined): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function text(v: JsonValue | undefined): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

/**
 * The options of an enum: enum (with enumNames as their titles, when they
 * match), or oneOf/anyOf entries of {const, title}; undefined when the
 * schema offers none.
 */
function choices(s: JsonObject, titled: 'oneOf' | 'anyOf'): { values: Array<string | number | boolean>; labels?: string[] } | undefined {
  const values = s.enum;
  if (Array.isArray(values) && values.length > 0 && values.every(isScalar)) {
    const names = s.enumNames;
    const labels = Array.isArray(names) && names.length === values.length && names.every((n) => typeof n === 'string') ? (names as string[]) : undefined;
    return { values, ...(labels ? { labels } : {}) };
  }
  const entries = s[titled];
  if (Array.isArray(entries) && entries.length > 0 && entries.every((e) => isObject(e) && e.const !== undefined && isScalar(e.const))) {
    const objects = entries as JsonObject[];
    return {
      values: objects.map((e) => e.const as string | number | boolean),
      labels: objects.map((e) => text(e.title) ?? String(e.const)),
    };
  }
  return undefined;
}

function bounds(s: JsonObject): Partial<SchemaField> {
  const out: Partial<SchemaField> = {};
  const put = (key: 'minLength' | 'maxLength' | 'minItems' | 'maxItems', v: number | undefined) => {
    if (v !== undefined) out[key] = v;
  };
  put('minLength', nonNegativeInteger(s.minLength));
  put('maxLength', nonNegativeInteger(s.maxLength));
  put('minItems', nonNegativeInteger(s.minItems));
  put('maxItems', nonNegativeInteger(s.maxItems));
  const min = finiteNumber(s.minimum);
  const max = finiteNumber(s.maximum);
  if (min !== undefined) out.minimum = min;
  if (max !== undefined) out.maximum = max;
  return out;
}

function fieldFor(name: string, schema: JsonValue | undefined, required: boolean): SchemaField {
  const s: JsonObject = isObject(schema) ? schema : {};
  const title = text(s.title);
  const description = text(s.description);
  const base = { name, required, ...(title !== undefined ? { title } : {}), ...(description !== undefined ? { description } : {}), ...bounds(s) };
  const def = s.default;
  const single = choices(s, 'oneOf');
  if (single) {
    const options = single.values.map((v) => JSON.stringify(v));
    const initial = def !== undefined && isScalar(def) && single.values.includes(def) ? JSON.stringify(def) : '';
    return { ...base, kind: 'enum', options, ...(single.labels ? { labels: single.labels } : {}), initial };
  }
  switch (schemaType(s)) {
    case 'string': {
      const format = typeof s.format === 'string' && FORMATS.includes(s.format) ? (s.format as StringFormat) : undefined;
      return { ...base, kind: 'text', ...(format ? { format } : {}), initial: typeof def === 'string' ? def : '' };
    }
    case 'number':
      return { ...base, kind: 'number', initial: typeof def === 'number' && Number.isFinite(def) ? String(def) : '' };
    case 'integer':
      return { ...base, kind: 'integer', initial: typeof def === 'number' && Number.isInteger(def) ? String(def) : '' };
    case 'boolean':
      return { ...base, kind: 'boolean', initial: typeof def === 'boolean' ? String(def) : '' };
    case 'array': {
      const items = isObject(s.items) ? s.items : undefined;
      const multi = items ? choices(items, 'anyOf') : undefined;
      if (multi) {
        const options = multi.values.map((v) => JSON.stringify(v));
        const chosen = Array.isArray(def) ? def.filter(isScalar) : [];
        const initial = multi.values.filter((v) => chosen.includes(v)).map((v) => JSON.stringify(v)).join('\n');
        return { ...base, kind: 'multi', options, ...(multi.labels ? { labels: multi.labels } : {}), initial };
      }
      const itemType = items ? schemaType(items) : undefined;
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

/** errors without name's (the user changed that field); the same object when it had none. */
export function withoutError<E>(errors: Record<string, E>, name: string): Record<string, E> {
  if (!(name in errors)) return errors;
  const { [name]: _cleared, ...rest } = errors;
  return rest;
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
    case 'multi': {
      const chosen = new Set(raw.split('\n'));
      const tokens = (field.options ?? []).filter((o) => chosen.has(o));
      return tokens.length === 0 ? { unset: true } : { token: `[${tokens.join(',')}]` };
    }
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

// ---------------------------------------------------------------- elicitation

/** The fields of a server's requested schema, date-times shown in local time (as a datetime-local input takes them). */
export function elicitationFields(requestedSchema: JsonObject): SchemaField[] {
  return schemaFields(requestedSchema).map((f) => {
    if (f.format !== 'date-time' || f.initial === '') return f;
    return { ...f, initial: localDateTime(f.initial) ?? '' };
  });
}

const pad = (n: number, width = 2) => String(Math.abs(n)).padStart(width, '0');

/** An RFC 3339 date-time as a datetime-local value (YYYY-MM-DDTHH:mm:ss, this computer's time), or undefined. */
export function localDateTime(rfc3339: string): string | undefined {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?([zZ]|[+-]\d\d:\d\d)$/.test(rfc3339)) return undefined;
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return undefined;
  return `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * A datetime-local value as RFC 3339 with this computer's offset
 * (2026-01-02T10:30:00+01:00); anything else as it is, for the backend to
 * judge.
 */
export function rfc3339(local: string): string {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d))?(?:\.\d+)?$/.exec(local);
  if (!m) return local;
  const [, y, mo, d, h, mi, sec] = m;
  const date = new Date(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec ?? '0'));
  if (Number.isNaN(date.getTime())) return local;
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
  return `${y}-${mo}-${d}T${h}:${mi}:${sec ?? '00'}${zone}`;
}

/** The bound a value breaks, or undefined. */
function boundError(field: SchemaField, value: JsonValue): FieldError | undefined {
  if (typeof value === 'string') {
    const n = [...value].length; // code points, as JSON Schema counts
    if (field.minLength !== undefined && n < field.minLength) return { key: 'field_too_short', count: field.minLength };
    if (field.maxLength !== undefined && n > field.maxLength) return { key: 'field_too_long', count: field.maxLength };
  } else if (typeof value === 'number') {
    if (field.minimum !== undefined && value < field.minimum) return { key: 'field_below', limit: field.minimum };
    if (field.maximum !== undefined && value > field.maximum) return { key: 'field_above', limit: field.maximum };
  } else if (Array.isArray(value)) {
    if (field.minItems !== undefined && value.length < field.minItems) return { key: 'field_too_few', count: field.minItems };
    if (field.maxItems !== undefined && value.length > field.maxItems) return { key: 'field_too_many', count: field.maxItems };
  }
  return undefined;
}

/**
 * collectContent is an elicitation's answer from the form values: the
 * object of the fields set (unset optional ones are left out), or each
 * field's error — required fields, types and the schema's bounds. Formats
 * are the input's type here and the backend's check (Go's parsers, the one
 * that decides): a value the backend refuses comes back as the request's
 * error.
 */
export function collectContent(fields: SchemaField[], values: Record<string, string>): ContentResult {
  const content: Record<string, JsonValue> = {};
  const errors: Record<string, FieldError> = {};
  for (const field of fields) {
    let raw = values[field.name] ?? '';
    if (field.kind === 'text' && field.format === 'date-time') raw = rfc3339(raw);
    const t = fieldToken(field, raw);
    if ('error' in t) {
      errors[field.name] = t.error;
      continue;
    }
    if ('unset' in t) {
      if (field.required) errors[field.name] = 'field_required';
      continue;
    }
    const value = JSON.parse(t.token) as JsonValue;
    if (typeof value === 'number' && !Number.isFinite(value)) {
      errors[field.name] = 'field_number'; // 1e400: no double holds it
      continue;
    }
    const broken = boundError(field, value);
    if (broken) errors[field.name] = broken;
    else content[field.name] = value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, content };
}
