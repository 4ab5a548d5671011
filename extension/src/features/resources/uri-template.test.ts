import { describe, expect, test } from 'vitest';
import { expandUriTemplate } from './uri-template';

// The RFC 6570 §3.2 examples (string variables) and MCP's templates.
const vars = { var: 'value', hello: 'Hello World!', path: '/foo/bar', x: '1024', y: '768', empty: '' };

describe('expandUriTemplate', () => {
  test.each([
    ['{var}', 'value'],
    ['{hello}', 'Hello%20World%21'],
    ['{+hello}', 'Hello%20World!'],
    ['{+path}/here', '/foo/bar/here'],
    ['here?ref={+path}', 'here?ref=/foo/bar'],
    ['X{#var}', 'X#value'],
    ['X{#hello}', 'X#Hello%20World!'],
    ['map?{x,y}', 'map?1024,768'],
    ['{x,hello,y}', '1024,Hello%20World%21,768'],
    ['{+x,hello,y}', '1024,Hello%20World!,768'],
    ['X{.var}', 'X.value'],
    ['X{.x,y}', 'X.1024.768'],
    ['{/var}', '/value'],
    ['{/var,x}/here', '/value/1024/here'],
    ['{;x,y}', ';x=1024;y=768'],
    ['{?x,y}', '?x=1024&y=768'],
    ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
    ['{var:3}', 'val'],
    ['{var:30}', 'value'],
    ['{/var*}', '/value'],
  ])('%s → %s', (template, want) => {
    expect(expandUriTemplate(template, vars)).toBe(want);
  });

  test('an empty or missing variable is left out, with its operator', () => {
    expect(expandUriTemplate('https://api.example/items{?q,limit}', { q: '', limit: '5' })).toBe('https://api.example/items?limit=5');
    expect(expandUriTemplate('https://api.example/items{?q}', {})).toBe('https://api.example/items');
    expect(expandUriTemplate('file:///{path}', { empty: '' })).toBe('file:///');
  });

  test("MCP templates: the value's reserved characters are encoded unless the operator keeps them", () => {
    expect(expandUriTemplate('demo://resource/dynamic/text/{resourceId}', { resourceId: '12' })).toBe('demo://resource/dynamic/text/12');
    expect(expandUriTemplate('file:///{path}', { path: 'docs/a b.md' })).toBe('file:///docs%2Fa%20b.md');
    expect(expandUriTemplate('file:///{+path}', { path: 'docs/a b.md' })).toBe('file:///docs/a%20b.md');
    expect(expandUriTemplate('notes://{name}', { name: '日记' })).toBe('notes://%E6%97%A5%E8%AE%B0');
    expect(expandUriTemplate('x://{+v}', { v: '50%25 off%zz' })).toBe('x://50%25%20off%25zz');
  });
});
