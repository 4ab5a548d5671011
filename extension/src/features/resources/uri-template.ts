// RFC 6570 URI templates, expanded with string values (MCP resource
// templates: "file:///{path}", "demo://resource/dynamic/text/{resourceId}",
// "https://api.example/{+base}/items{?q,limit}"). Every level-4 operator
// and the prefix modifier; a list or map value is not something the form
// can enter, so the explode modifier changes nothing. A variable the user
// left empty is undefined: its expression drops it (with `{?q}` the whole
// "?q=" disappears), as the RFC's undefined variables do. The backend
// checks that the result is an absolute URI.

interface Operator {
  first: string;
  sep: string;
  named: boolean;
  /** What an empty value of a named variable is followed by. */
  ifEmpty: string;
  /** Reserved characters and pct-encoded triplets pass as they are. */
  reserved: boolean;
}

const OPERATORS: Record<string, Operator> = {
  '': { first: '', sep: ',', named: false, ifEmpty: '', reserved: false },
  '+': { first: '', sep: ',', named: false, ifEmpty: '', reserved: true },
  '#': { first: '#', sep: ',', named: false, ifEmpty: '', reserved: true },
  '.': { first: '.', sep: '.', named: false, ifEmpty: '', reserved: false },
  '/': { first: '/', sep: '/', named: false, ifEmpty: '', reserved: false },
  ';': { first: ';', sep: ';', named: true, ifEmpty: '', reserved: false },
  '?': { first: '?', sep: '&', named: true, ifEmpty: '=', reserved: false },
  '&': { first: '&', sep: '&', named: true, ifEmpty: '=', reserved: false },
};

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function pct(ch: string): string {
  return [...new TextEncoder().encode(ch)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

/** value encoded for the operator: unreserved characters kept, and with `+`/`#` the reserved ones and %XX triplets too. */
function encode(value: string, reserved: boolean): string {
  let out = '';
  const chars = [...value];
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (UNRESERVED.test(ch) || (reserved && RESERVED.test(ch))) {
      out += ch;
    } else if (reserved && ch === '%' && /^[0-9A-Fa-f]{2}$/.test((chars[i + 1] ?? '') + (chars[i + 2] ?? ''))) {
      out += ch + chars[i + 1]! + chars[i + 2]!;
      i += 2;
    } else {
      out += pct(ch);
    }
  }
  return out;
}

interface VarSpec {
  name: string;
  prefix?: number;
}

function parseVarSpec(spec: string): VarSpec {
  const explode = spec.endsWith('*');
  const s = explode ? spec.slice(0, -1) : spec;
  const colon = s.indexOf(':');
  if (colon < 0) return { name: s };
  const prefix = Number(s.slice(colon + 1));
  return Number.isInteger(prefix) && prefix > 0 ? { name: s.slice(0, colon), prefix } : { name: s.slice(0, colon) };
}

function expandExpression(body: string, values: Readonly<Record<string, string>>): string {
  const opChar = body[0] !== undefined && '+#./;?&'.includes(body[0]) ? body[0] : '';
  const op = OPERATORS[opChar]!;
  const parts: string[] = [];
  for (const raw of body.slice(opChar.length).split(',')) {
    const spec = parseVarSpec(raw.trim());
    const value = values[spec.name];
    if (value === undefined || value === '') continue;
    const cut = spec.prefix !== undefined ? [...value].slice(0, spec.prefix).join('') : value;
    const encoded = encode(cut, op.reserved);
    parts.push(op.named ? (encoded === '' ? spec.name + op.ifEmpty : `${spec.name}=${encoded}`) : encoded);
  }
  return parts.length === 0 ? '' : op.first + parts.join(op.sep);
}

/** The URI template with values put in (name → the text the user entered). */
export function expandUriTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([^{}]*)\}/g, (_whole, body: string) => expandExpression(body, values));
}
